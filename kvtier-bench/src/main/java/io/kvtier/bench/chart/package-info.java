/**
 * The benchmark's charts, each written as a PNG (for a quick look) and an SVG (for BENCHMARKS.md) with XChart,
 * headless: throughput vs value size, latency distribution, hit rate vs working set, the failover timeline. Entry
 * point: {@link io.kvtier.bench.chart.Charts}; the house style and the file writing are kvtier-common's
 * {@link io.kvtier.common.chart.ChartWriter}.
 */
package io.kvtier.bench.chart;
