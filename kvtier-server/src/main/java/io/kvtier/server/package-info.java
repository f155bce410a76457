/**
 * The kvtier node: {@link io.kvtier.server.KvtierServer} binds a Netty RESP endpoint in front of a
 * {@link io.kvtier.store.TieredStore}, configured by one validated {@link io.kvtier.server.ServerOptions}.
 */
package io.kvtier.server;
