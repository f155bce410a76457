/**
 * {@code kvtier bench}: a RESP load generator with KV-cache workloads, latency histograms, and side-by-side runs
 * against Redis with charts. {@link io.kvtier.bench.BenchCommand} is the command line; {@link
 * io.kvtier.bench.BenchOptions} the validated options; {@link io.kvtier.bench.BenchRun} runs one workload.
 */
package io.kvtier.bench;
