/**
 * Charts in kvtier's house style, written headless with XChart as PNG and compacted SVG:
 * {@link io.kvtier.common.chart.ChartWriter} creates and writes them, {@link io.kvtier.common.chart.ChartData} checks
 * and converts what they plot. The charts themselves live with their tools (kvtier-bench's {@code chart} package,
 * {@code kvtier simulate}).
 */
package io.kvtier.common.chart;
