package io.kvtier.server.config;

import java.nio.file.Path;
import java.util.Locale;

/**
 * TLS, with Redis's flag names and meanings; absent (null in {@link ServerOptions}) when there is no TLS port.
 * Validated on construction; the files themselves are read when the node starts ({@link io.kvtier.server.tls.TlsContexts}).
 *
 * @param port        {@code --tls-port}: where TLS clients connect, 1..65535 (Redis's 0, off, is a null TlsSettings)
 * @param certFile    {@code --tls-cert-file}: the node's certificate chain (PEM), shown to clients and, with
 *                    {@code cluster}, to the peers it connects to
 * @param keyFile     {@code --tls-key-file}: the certificate's private key (PEM, PKCS#8, unencrypted)
 * @param caCertFile  {@code --tls-ca-cert-file}: the CA certificates (PEM) that client and peer certificates are
 *                    verified against; required, as in Redis
 * @param authClients {@code --tls-auth-clients}: whether a client must show a certificate the CA signed
 * @param cluster     {@code --tls-cluster}: links between cluster nodes use TLS too, to the peers' TLS ports
 */
public record TlsSettings(int port, Path certFile, Path keyFile, Path caCertFile, AuthClients authClients,
                          boolean cluster) {

    /** Redis's tls-auth-clients: a certificate is required (yes, the default), not asked for (no), or checked if shown. */
    public enum AuthClients {
        YES, NO, OPTIONAL;

        /** Parses Redis's spelling: yes, no or optional (any case). */
        public static AuthClients parse(String text) {
            return switch (text.trim().toLowerCase(Locale.ROOT)) {
                case "yes" -> YES;
                case "no" -> NO;
                case "optional" -> OPTIONAL;
                default -> throw new IllegalArgumentException("--tls-auth-clients: '" + text
                        + "' is not yes, no or optional");
            };
        }

        /** As Redis writes it (CONFIG GET). */
        public String redisName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public TlsSettings {
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("--tls-port " + port + " is outside 1..65535 (0 = no TLS)");
        }
        if (certFile == null || keyFile == null) {
            throw new IllegalArgumentException("--tls-port needs --tls-cert-file and --tls-key-file");
        }
        if (caCertFile == null) {
            throw new IllegalArgumentException("--tls-port needs --tls-ca-cert-file (the CA that client and peer "
                    + "certificates are verified against; Redis requires it too)");
        }
        if (authClients == null) {
            authClients = AuthClients.YES;
        }
    }
}
