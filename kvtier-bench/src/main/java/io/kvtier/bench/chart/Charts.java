package io.kvtier.bench.chart;

import static io.kvtier.common.chart.ChartData.log2;
import static io.kvtier.common.chart.ChartData.percent;
import static io.kvtier.common.chart.ChartData.requirePoints;
import static io.kvtier.common.chart.ChartData.requireSeries;

import io.kvtier.common.chart.ChartData;
import io.kvtier.common.chart.ChartFiles;
import io.kvtier.common.chart.ChartWriter;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The benchmark's charts: throughput by value size, latency distribution, hit rate by working set. Each method
 * writes {@code <outPrefix>.png} and {@code <outPrefix>.svg} (960 x 600) and returns both paths; one line per system,
 * in the map's iteration order (pass a LinkedHashMap or TreeMap to fix colours and legend order). Stateless and
 * thread-safe.
 */
public final class Charts {
    private Charts() {}

    /** Throughput (GB/s) by value size (bytes, log scale), one line per system. */
    public static ChartFiles throughputVsValueSize(Path outPrefix, String title,
            Map<String, SortedMap<Long, Double>> gbPerSecondBySystem) throws IOException {
        return throughputVsValueSize(outPrefix, title, gbPerSecondBySystem, List.of());
    }

    /** As above, with dashed horizontal lines for machine limits, such as the loopback TCP throughput. */
    public static ChartFiles throughputVsValueSize(Path outPrefix, String title,
            Map<String, SortedMap<Long, Double>> gbPerSecondBySystem, List<LimitLine> limits) throws IOException {
        requireSeries(gbPerSecondBySystem);
        XYChart chart = ChartWriter.newChart(title, "Value size", "Throughput (GB/s)");
        // XChart labels a log axis in powers of ten; plotting log2(size) on a linear axis gives binary sizes instead.
        chart.getStyler().setxAxisTickLabelsFormattingFunction(ChartData::binarySizeLabel);
        chart.getStyler().setYAxisMin(0.0);
        double minX = Double.MAX_VALUE;
        double maxX = -Double.MAX_VALUE;
        for (Map.Entry<String, SortedMap<Long, Double>> system : gbPerSecondBySystem.entrySet()) {
            SortedMap<Long, Double> points = requirePoints(system.getKey(), system.getValue());
            double[] x = points.keySet().stream().mapToDouble(size -> log2(system.getKey(), size)).toArray();
            double[] y = points.values().stream().mapToDouble(Double::doubleValue).toArray();
            chart.addSeries(system.getKey(), x, y);
            minX = Math.min(minX, x[0]);
            maxX = Math.max(maxX, x[x.length - 1]);
        }
        if (minX == maxX) {
            minX -= 1;
            maxX += 1;
        }
        addLimitLines(chart, limits, minX, maxX);
        return ChartWriter.write(chart, outPrefix);
    }

    private static void addLimitLines(XYChart chart, List<LimitLine> limits, double minX, double maxX) {
        for (LimitLine limit : limits) {
            XYSeries line = chart.addSeries(limit.label(), new double[] {minX, maxX},
                    new double[] {limit.gbPerSecond(), limit.gbPerSecond()});
            line.setMarker(SeriesMarkers.NONE);
            line.setLineStyle(ChartWriter.LIMIT_STROKE);
            line.setLineColor(ChartWriter.LIMIT_COLOR);
        }
    }

    /**
     * Latency distributions from latencies in milliseconds, each array sorted ascending: x is latency (log scale), y
     * the percentile on a "nines" scale (0%, 90%, 99%, 99.9% equally spaced; see {@link LatencyCurve}).
     */
    public static ChartFiles latencyCdf(Path outPrefix, String title, Map<String, double[]> sortedMillisBySystem)
            throws IOException {
        requireSeries(sortedMillisBySystem);
        XYChart chart = newLatencyChart(title);
        for (Map.Entry<String, double[]> system : sortedMillisBySystem.entrySet()) {
            double[] sorted = system.getValue();
            if (sorted == null || sorted.length == 0) {
                throw new IllegalArgumentException("system \"" + system.getKey() + "\" has no latencies to plot");
            }
            addCurve(chart, system.getKey(), LatencyCurve.sample(sorted.length,
                    q -> LatencyCurve.nearestRank(sorted, q)));
        }
        return ChartWriter.write(chart, outPrefix);
    }

    /** As {@link #latencyCdf}, from HdrHistograms whose values were recorded in {@code recordedUnit}. */
    public static ChartFiles latencyCdfOfHistograms(Path outPrefix, String title, Map<String, Histogram> bySystem,
            TimeUnit recordedUnit) throws IOException {
        requireSeries(bySystem);
        double millisPerUnit = recordedUnit.toNanos(1) / 1e6;
        XYChart chart = newLatencyChart(title);
        for (Map.Entry<String, Histogram> system : bySystem.entrySet()) {
            Histogram histogram = system.getValue();
            if (histogram == null || histogram.getTotalCount() == 0) {
                throw new IllegalArgumentException("system \"" + system.getKey() + "\" has no latencies to plot");
            }
            addCurve(chart, system.getKey(), LatencyCurve.sample(histogram.getTotalCount(),
                    q -> histogram.getValueAtPercentile(q * 100) * millisPerUnit));
        }
        return ChartWriter.write(chart, outPrefix);
    }

    /** Hit rate (0..1, drawn as %) by working set as a multiple of the memory budget, one line per system. */
    public static ChartFiles hitRateVsWorkingSet(Path outPrefix, String title,
            Map<String, SortedMap<Double, Double>> hitRateBySystem) throws IOException {
        requireSeries(hitRateBySystem);
        XYChart chart = ChartWriter.newChart(title, "Working set / memory budget", "Hit rate (%)");
        chart.getStyler().setYAxisMin(0.0);
        chart.getStyler().setYAxisMax(100.0);
        chart.getStyler().setXAxisMin(0.0);
        chart.getStyler().setxAxisTickLabelsFormattingFunction(Charts::ratioLabel);
        for (Map.Entry<String, SortedMap<Double, Double>> system : hitRateBySystem.entrySet()) {
            SortedMap<Double, Double> points = requirePoints(system.getKey(), system.getValue());
            double[] x = points.keySet().stream().mapToDouble(Double::doubleValue).toArray();
            double[] y = points.values().stream().mapToDouble(rate -> percent(system.getKey(), rate)).toArray();
            chart.addSeries(system.getKey(), x, y);
        }
        return ChartWriter.write(chart, outPrefix);
    }

    private static XYChart newLatencyChart(String title) {
        XYChart chart = ChartWriter.newChart(title, "Latency (ms, log scale)", "Percentile");
        // XChart's own log axis labels only whole decades, none at all on a narrower range: plot log10(ms) instead.
        chart.getStyler().setxAxisTickLabelsFormattingFunction(Charts::millisLabel);
        chart.getStyler().setYAxisMin(0.0);
        chart.getStyler().setyAxisTickLabelsFormattingFunction(LatencyCurve::percentileLabel);
        return chart;
    }

    private static void addCurve(XYChart chart, String system, LatencyCurve curve) {
        double[] log10Millis = Arrays.stream(curve.millis()).map(Math::log10).toArray();
        XYSeries series = chart.addSeries(system, log10Millis, curve.nines());
        series.setMarker(SeriesMarkers.NONE);
    }

    /** The latency at {@code log10Millis}, to three significant digits: "0.25", "1", "3.16", "120". */
    static String millisLabel(double log10Millis) {
        return new BigDecimal(Math.pow(10, log10Millis), new MathContext(3)).stripTrailingZeros().toPlainString();
    }

    /** "0.5x", "2x": a working-set ratio with at most four significant digits and no trailing zeros. */
    static String ratioLabel(double ratio) {
        return new BigDecimal(ratio, new MathContext(4)).stripTrailingZeros().toPlainString() + "x";
    }
}
