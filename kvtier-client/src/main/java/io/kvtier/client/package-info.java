/**
 * A Netty RESP client for kvtier's own tools: pipelined connections where every call has a timeout, replies decoded
 * without buffering a bulk payload twice; {@link io.kvtier.client.HostPort}, a node's address. Used by the benchmark,
 * cluster peers and the router; the cluster-aware client is in {@code io.kvtier.client.cluster}.
 */
package io.kvtier.client;
