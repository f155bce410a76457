package io.kvtier.bench.chart;

import io.kvtier.common.chart.ChartFiles;
import io.kvtier.common.chart.ChartWriter;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.knowm.xchart.AnnotationLine;
import org.knowm.xchart.AnnotationText;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * A time series chart: rates on the left axis (ops/s), others on the right (errors/s), and labelled vertical
 * markers for events. Writes {@code <outPrefix>.png} and {@code .svg} (960 x 600). Stateless and thread-safe.
 */
public final class TimelineChart {
    private static final BasicStroke MARKER_STROKE = new BasicStroke(1.2f, BasicStroke.CAP_BUTT,
            BasicStroke.JOIN_MITER, 10f, new float[] {5f, 4f}, 0f);
    private static final Color MARKER_COLOR = new Color(90, 90, 90);
    private static final Color[] LEFT_COLORS = {new Color(31, 119, 180), new Color(44, 160, 44),
        new Color(148, 103, 189)};
    private static final Color[] RIGHT_COLORS = {new Color(214, 39, 40), new Color(140, 86, 75)};
    /** Label heights as fractions of the left axis, cycled so neighbouring markers' labels do not overlap. */
    private static final double[] LABEL_HEIGHTS = {0.97, 0.89, 0.81, 0.73, 0.65};

    private TimelineChart() {
    }

    /**
     * @param seconds x of every point, ascending; a NaN y is a gap in its line
     * @param left    series on the left axis, in legend order (pass a LinkedHashMap)
     * @param right   series on the right axis, in legend order; may be empty
     * @param markers vertical lines, in time order
     */
    public static ChartFiles write(Path outPrefix, String title, String leftTitle, String rightTitle,
            double[] seconds, Map<String, double[]> left, Map<String, double[]> right, List<Marker> markers)
            throws IOException {
        return write(outPrefix, title, leftTitle, rightTitle, seconds, left, right, markers, Double.NaN);
    }

    /** As above, the right axis ending at {@code rightMax} (100 for a percentage), or a round top above its data. */
    public static ChartFiles write(Path outPrefix, String title, String leftTitle, String rightTitle,
            double[] seconds, Map<String, double[]> left, Map<String, double[]> right, List<Marker> markers,
            double rightMax) throws IOException {
        if (seconds.length == 0 || left.isEmpty()) {
            throw new IllegalArgumentException("a timeline needs points and at least one left-axis series");
        }
        XYChart chart = ChartWriter.newChart(title, "Time (s)", leftTitle);
        double top = niceTop(left.values().stream().flatMapToDouble(Arrays::stream).filter(Double::isFinite)
                .max().orElse(1));
        chart.getStyler().setYAxisMin(0, 0.0);
        chart.getStyler().setYAxisMax(0, top);
        chart.getStyler().setXAxisMin(0.0);
        chart.getStyler().setXAxisMax(seconds[seconds.length - 1]);
        // Solid grid lines: the dashed default is drawn as hundreds of tiny rectangles, a third of the SVG.
        chart.getStyler().setPlotGridLinesStroke(new BasicStroke(1f));
        int i = 0;
        for (Map.Entry<String, double[]> e : left.entrySet()) {
            line(chart, e.getKey(), seconds, e.getValue(), 0).setLineColor(LEFT_COLORS[i++ % LEFT_COLORS.length]);
        }
        if (!right.isEmpty()) {
            chart.getStyler().setYAxisGroupPosition(1, Styler.YAxisPosition.Right);
            chart.setYAxisGroupTitle(1, rightTitle);
            chart.getStyler().setYAxisMin(1, 0.0);
            chart.getStyler().setYAxisMax(1, Double.isNaN(rightMax) ? niceTop(right.values().stream()
                    .flatMapToDouble(Arrays::stream).filter(Double::isFinite).max().orElse(1)) : rightMax);
            int j = 0;
            for (Map.Entry<String, double[]> e : right.entrySet()) {
                line(chart, e.getKey(), seconds, e.getValue(), 1)
                        .setLineColor(RIGHT_COLORS[j++ % RIGHT_COLORS.length]);
            }
        }
        for (int k = 0; k < markers.size(); k++) {
            Marker m = markers.get(k);
            chart.addAnnotation(new AnnotationLine(m.x(), true, false));
            AnnotationText text = new AnnotationText(" " + m.label(), m.x(), top * LABEL_HEIGHTS[k
                    % LABEL_HEIGHTS.length], false);
            chart.addAnnotation(text);
        }
        chart.getStyler().setAnnotationLineColor(MARKER_COLOR);
        chart.getStyler().setAnnotationLineStroke(MARKER_STROKE);
        chart.getStyler().setAnnotationTextFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        chart.getStyler().setAnnotationTextFontColor(MARKER_COLOR);
        return ChartWriter.write(chart, outPrefix);
    }

    private static XYSeries line(XYChart chart, String name, double[] x, double[] y, int axis) {
        if (y.length != x.length) {
            throw new IllegalArgumentException("series \"" + name + "\" has " + y.length + " points for "
                    + x.length + " times");
        }
        XYSeries s = chart.addSeries(name, x, y);
        s.setMarker(SeriesMarkers.NONE);
        s.setYAxisGroup(axis);
        return s;
    }

    /** A round axis top above {@code max}: 1, 2 or 5 times a power of ten, with 10% headroom for the labels. */
    static double niceTop(double max) {
        double target = Math.max(1, max * 1.1);
        double power = Math.pow(10, Math.floor(Math.log10(target)));
        for (double step : new double[] {1, 2, 5, 10}) {
            if (step * power >= target) {
                return step * power;
            }
        }
        return 10 * power;
    }
}
