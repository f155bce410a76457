package io.kvtier.bench.run;

import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The benchmark's TLS (redis-cli's flags {@code --tls --cacert --cert --key}): the server's certificate is verified
 * against {@code caCert} (the JDK's trusted CAs without it), not against the host name, as redis-cli does; a client
 * certificate is shown when {@code cert} and {@code key} are given. OpenSSL where it loads, as the server.
 */
public record BenchTls(Optional<Path> caCert, Optional<Path> cert, Optional<Path> key) {
    public BenchTls {
        if (cert.isPresent() != key.isPresent()) {
            throw new IllegalArgumentException("--cert and --key go together");
        }
    }

    /** A client context from the files. */
    public SslContext clientContext() throws IOException {
        SslContextBuilder b = SslContextBuilder.forClient()
                .sslProvider(OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK)
                .endpointIdentificationAlgorithm(null);
        try {
            if (caCert.isPresent()) {
                b.trustManager(caCert.get().toFile());
            }
            if (cert.isPresent()) {
                b.keyManager(cert.get().toFile(), key.get().toFile());
            }
            return b.build();
        } catch (javax.net.ssl.SSLException | IllegalArgumentException e) {
            throw new IOException("cannot use the TLS files (--cacert, --cert, --key): " + e.getMessage(), e);
        }
    }
}
