/**
 * TLS for client connections and cluster links: {@link io.kvtier.server.tls.TlsContexts} builds Netty SSL contexts
 * from the certificate files and rebuilds them on a reload, so that new connections use the new files.
 */
package io.kvtier.server.tls;
