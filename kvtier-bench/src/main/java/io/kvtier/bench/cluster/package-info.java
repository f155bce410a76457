/**
 * {@code kvtier bench cluster}: starts kvtier node processes on loopback and measures (1) throughput of the same
 * {@code setget --cluster} load on 1 node and on 3 nodes, A B A B, and (2) a failover timeline: ops/s and errors per
 * 100 ms while a node is killed and while another joins, with the cluster's own events as markers.
 * {@link io.kvtier.bench.cluster.ClusterBenchRun} drives a run.
 */
package io.kvtier.bench.cluster;
