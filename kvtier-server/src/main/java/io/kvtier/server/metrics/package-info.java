/**
 * Prometheus metrics of a node: per-command counts and latency, per-tier bytes, hits, misses and moves; in a cluster,
 * membership, slots, replication lag and rebalancing progress.
 */
package io.kvtier.server.metrics;
