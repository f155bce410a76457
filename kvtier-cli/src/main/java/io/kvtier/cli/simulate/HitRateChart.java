package io.kvtier.cli.simulate;

import static io.kvtier.common.chart.ChartData.log2;
import static io.kvtier.common.chart.ChartData.percent;
import static io.kvtier.common.chart.ChartData.requirePoints;
import static io.kvtier.common.chart.ChartData.requireSeries;

import io.kvtier.common.chart.ChartData;
import io.kvtier.common.chart.ChartWriter;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.SortedMap;
import org.knowm.xchart.XYChart;

/**
 * The chart of {@code kvtier simulate --chart}: hit rate (0..1, drawn as %) by total budget (memory + disk, bytes,
 * log scale), one line per series, e.g. per memory budget, in the map's iteration order. Stateless.
 */
final class HitRateChart {
    private HitRateChart() {
    }

    /** Writes the chart to {@code file}, a PNG or an SVG by its extension; returns {@code file}. */
    static Path write(Path file, String title, Map<String, SortedMap<Long, Double>> hitRateBySeries)
            throws IOException {
        requireSeries(hitRateBySeries);
        XYChart chart = ChartWriter.newChart(title, "Memory + disk budget (log scale)",
                "Hit rate (% of prompt tokens)");
        // XChart labels a log axis in powers of ten; plotting log2(bytes) on a linear axis gives binary sizes instead.
        chart.getStyler().setxAxisTickLabelsFormattingFunction(ChartData::binarySizeLabel);
        chart.getStyler().setYAxisMin(0.0);
        chart.getStyler().setYAxisMax(100.0);
        for (Map.Entry<String, SortedMap<Long, Double>> series : hitRateBySeries.entrySet()) {
            SortedMap<Long, Double> points = requirePoints(series.getKey(), series.getValue());
            double[] x = points.keySet().stream().mapToDouble(size -> log2(series.getKey(), size)).toArray();
            double[] y = points.values().stream().mapToDouble(rate -> percent(series.getKey(), rate)).toArray();
            chart.addSeries(series.getKey(), x, y);
        }
        return ChartWriter.writeFile(chart, file);
    }
}
