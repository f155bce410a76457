/**
 * {@code kvtier bench compare}: starts kvtier and redis-server with the same memory cap, runs the same workloads
 * against both in alternating rounds, and reports kvtier/Redis ratios, each figure as a share of this machine's
 * measured limits, as a table, JSON, CSV and charts. {@link io.kvtier.bench.compare.CompareRun} drives a run.
 */
package io.kvtier.bench.compare;
