package io.kvtier.server.tls;

import io.kvtier.server.config.TlsSettings;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's SSL contexts, built from {@link TlsSettings}' files: one for the TLS listener and, with
 * {@code --tls-cluster yes}, one for the connections this node opens to its peers (showing the same certificate and
 * verifying theirs against the same CA, as Redis's cluster bus does). OpenSSL (BoringSSL, netty-tcnative) where its
 * native library loads, the JDK's TLS otherwise: the same files work with both.
 *
 * <p>{@link #reload()} reads the files again (SIGHUP); connections open at that moment keep the certificates they
 * were established with, new ones get the new. A reload that fails keeps the contexts in use. Thread-safe.
 *
 * <p>Peers verify each other's certificate chain but not the host name in it, as Redis does: nodes are reached at
 * addresses (pod IPs, announced host:port) that certificates often do not name, and the CA is the cluster's own.
 */
public final class TlsContexts {
    private static final Logger log = LoggerFactory.getLogger(TlsContexts.class);

    private final TlsSettings settings;
    private final SslProvider provider;
    private volatile SslContext server;
    private volatile SslContext peer;

    private TlsContexts(TlsSettings settings, SslProvider provider) {
        this.settings = settings;
        this.provider = provider;
    }

    /**
     * Reads the certificate, key and CA files and builds the contexts.
     *
     * @throws IOException naming the flag and file that is missing, unreadable or not a PEM certificate or key
     */
    public static TlsContexts load(TlsSettings settings) throws IOException {
        SslProvider provider = io.netty.handler.ssl.OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK;
        TlsContexts contexts = new TlsContexts(settings, provider);
        contexts.build();
        log.info("TLS on port {} with {} ({}), client certificates {}{}", settings.port(),
                provider == SslProvider.OPENSSL ? "OpenSSL" : "the JDK's TLS",
                provider == SslProvider.OPENSSL ? io.netty.handler.ssl.OpenSsl.versionString()
                        : "OpenSSL did not load: " + io.netty.handler.ssl.OpenSsl.unavailabilityCause(),
                switch (settings.authClients()) {
                    case YES -> "required";
                    case NO -> "not asked for";
                    case OPTIONAL -> "verified when shown";
                }, settings.cluster() ? ", cluster links over TLS" : "");
        return contexts;
    }

    /** Builds new contexts from the files and swaps them in; on failure the contexts in use stay. */
    public synchronized void reload() throws IOException {
        build();
        log.info("TLS certificates reloaded from {}, {} and {}; new connections use them", settings.certFile(),
                settings.keyFile(), settings.caCertFile());
    }

    /** The listener's context: the node's certificate, and client certificates as --tls-auth-clients says. */
    public SslContext server() {
        return server;
    }

    /** The context of connections to peers (the node's certificate as client certificate); null without --tls-cluster. */
    public SslContext peer() {
        return peer;
    }

    /** OpenSSL or the JDK. */
    public SslProvider provider() {
        return provider;
    }

    private void build() throws IOException {
        Path cert = readable("--tls-cert-file", settings.certFile());
        Path key = readable("--tls-key-file", settings.keyFile());
        Path ca = readable("--tls-ca-cert-file", settings.caCertFile());
        SslContext newServer;
        SslContext newPeer = null;
        try {
            newServer = SslContextBuilder.forServer(cert.toFile(), key.toFile()).sslProvider(provider)
                    .trustManager(ca.toFile()).clientAuth(switch (settings.authClients()) {
                        case YES -> ClientAuth.REQUIRE;
                        case NO -> ClientAuth.NONE;
                        case OPTIONAL -> ClientAuth.OPTIONAL;
                    }).build();
            if (settings.cluster()) {
                newPeer = SslContextBuilder.forClient().sslProvider(provider).keyManager(cert.toFile(), key.toFile())
                        .trustManager(ca.toFile()).endpointIdentificationAlgorithm(null).build();
            }
        } catch (javax.net.ssl.SSLException | IllegalArgumentException e) {
            throw new IOException("cannot use --tls-cert-file " + cert + ", --tls-key-file " + key
                    + ", --tls-ca-cert-file " + ca + ": " + describe(e)
                    + " (PEM files are expected; the key unencrypted PKCS#8, '-----BEGIN PRIVATE KEY-----': "
                    + "openssl pkcs8 -topk8 -nocrypt converts others)", e);
        }
        server = newServer;
        peer = newPeer;
    }

    private static Path readable(String flag, Path file) throws IOException {
        if (!Files.isRegularFile(file) || !Files.isReadable(file)) {
            throw new IOException(flag + " " + file + ": no such file, or not readable");
        }
        return file;
    }

    /** The innermost message: Netty wraps the parser's reason in generic ones. */
    private static String describe(Throwable e) {
        StringBuilder s = new StringBuilder(String.valueOf(e.getMessage()));
        for (Throwable c = e.getCause(); c != null && c != e; c = c.getCause()) {
            if (c.getMessage() != null && !s.toString().contains(c.getMessage())) {
                s.append(": ").append(c.getMessage());
            }
            if (c.getCause() == c) {
                break;
            }
        }
        return s.toString();
    }
}
