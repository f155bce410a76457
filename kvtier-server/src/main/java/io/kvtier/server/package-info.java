/**
 * The kvtier node: {@link io.kvtier.server.KvtierServer} binds a Netty RESP endpoint in front of a
 * {@link io.kvtier.store.TieredStore}, configured by one validated {@link io.kvtier.server.config.ServerOptions}. The
 * top layer: it wires the packages below together, and none of them imports it (docs/architecture.md).
 */
package io.kvtier.server;
