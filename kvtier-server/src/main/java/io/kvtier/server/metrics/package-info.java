/**
 * Prometheus metrics of a node: per-command counts and latency, per-tier bytes, hits, misses and moves; in a cluster,
 * membership, slots, replication lag and rebalancing progress; served on {@code /metrics} by a bounded Netty
 * endpoint that asks for the node's password. Also INFO's instantaneous rates.
 */
package io.kvtier.server.metrics;
