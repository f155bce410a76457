/**
 * The benchmark's charts, each written as a PNG (for a quick look) and an SVG (for BENCHMARKS.md) with XChart,
 * headless: throughput vs value size, latency distribution, hit rate vs working set. Entry point:
 * {@link io.kvtier.bench.chart.Charts}.
 */
package io.kvtier.bench.chart;
