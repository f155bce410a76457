/**
 * One benchmark run: {@link io.kvtier.bench.run.BenchOptions}, the validated options, and
 * {@link io.kvtier.bench.run.BenchRun}, which opens the endpoint (one server, or a cluster through the cluster
 * client), warms up, runs one workload and writes the reports. The command line, comparisons and cluster scenarios
 * build on it; it depends on none of them.
 */
package io.kvtier.bench.run;
