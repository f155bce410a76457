/** Prometheus metrics of a node: per-command counts and latency, per-tier bytes, hits, misses and moves. */
package io.kvtier.server.metrics;
