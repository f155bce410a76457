/**
 * A Netty RESP client for kvtier's own tools: pipelined connections where every call has a timeout, replies decoded
 * without buffering a bulk payload twice. Used by the benchmark, later by cluster peers and the router.
 */
package io.kvtier.client;
