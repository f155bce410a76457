/**
 * What a benchmark run reports and how: the {@link io.kvtier.bench.report.BenchResult} model, its JSON and CSV
 * files (through kvtier-common's JSON writer), the table on stdout, latency histogram math, and the progress bar.
 * Depends on nothing else in the module.
 */
package io.kvtier.bench.report;
