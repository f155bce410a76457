/**
 * A node's validated configuration: {@link io.kvtier.server.config.ServerOptions} and the settings it groups (cluster,
 * TLS, client limits), and the client limit the open-file limit allows. The bottom layer: it imports no other
 * package of the server.
 */
package io.kvtier.server.config;
