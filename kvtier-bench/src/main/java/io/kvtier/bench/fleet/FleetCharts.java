package io.kvtier.bench.fleet;

import io.kvtier.bench.chart.TimelineChart;
import io.kvtier.common.chart.ChartFiles;
import io.kvtier.common.chart.ChartWriter;
import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.lines.SeriesLines;
import org.knowm.xchart.style.markers.Marker;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The fleet benchmark's charts, each a PNG and an SVG in the house style ({@link ChartWriter}), one line per
 * configuration ({@link FleetPoint#config()}, in the order the points first name them), its points in rate order:
 * requests/s per GPU against tokens/s per user (the throughput one GPU gives at the speed each user sees), TTFT p90
 * against the offered rate, and the hit rate of each tier against the offered rate; and for each point where a kvtier
 * node was killed, its timeline. Points with nothing measured (NaN) are left out of a line. Stateless and
 * thread-safe.
 */
public final class FleetCharts {
    public static final String RPS_VS_TPS = "fleet-rps-vs-tps";
    public static final String TTFT_P90 = "fleet-ttft-p90";
    public static final String HIT_RATE = "fleet-hit-rate";
    public static final String KILL_TIMELINE = "fleet-kill";

    private FleetCharts() {
    }

    /** Writes the three charts into {@code dir} (made if missing); returns the six files, PNG then SVG of each. */
    public static List<Path> write(Path dir, List<FleetPoint> points) throws IOException {
        if (points.isEmpty()) {
            throw new IllegalArgumentException("the fleet charts need at least one point");
        }
        Map<String, List<FleetPoint>> byConfig = byConfig(points);
        List<Path> files = new ArrayList<>();
        add(files, ChartWriter.write(rpsVsTps(byConfig), dir.resolve(RPS_VS_TPS)));
        add(files, ChartWriter.write(ttftP90(byConfig), dir.resolve(TTFT_P90)));
        add(files, ChartWriter.write(hitRate(byConfig), dir.resolve(HIT_RATE)));
        for (FleetPoint p : points) {
            if (p.timeline().hasKill()) {
                add(files, killTimeline(dir, p));
            }
        }
        return files;
    }

    /** The name of a point's kill timeline: {@code fleet-kill-<config>-<rate>}, runs of other characters as '-'. */
    static String killTimelineName(FleetPoint p) {
        return KILL_TIMELINE + "-" + (p.config() + "-" + p.rateLabel()).replaceAll("[^A-Za-z0-9.]+", "-")
                .replaceAll("(^-|-$)", "");
    }

    /**
     * TTFT p50 and p90 of the requests sent in each bucket, and the share of their prompt tokens served from cache,
     * with the kill marked: what the fleet saw while a kvtier node was gone (and its cluster failed over).
     */
    private static ChartFiles killTimeline(Path dir, FleetPoint p) throws IOException {
        FleetTimeline t = p.timeline();
        Map<String, double[]> left = new LinkedHashMap<>();
        left.put("TTFT p50", t.buckets().stream().mapToDouble(FleetTimeline.Bucket::ttftP50).toArray());
        left.put("TTFT p90", t.buckets().stream().mapToDouble(FleetTimeline.Bucket::ttftP90).toArray());
        Map<String, double[]> right = new LinkedHashMap<>();
        right.put("prompt tokens cached (%)", t.buckets().stream().mapToDouble(b -> b.cachedShare() * 100)
                .toArray());
        return TimelineChart.write(dir.resolve(killTimelineName(p)), "A kvtier node killed: " + p.config() + ", "
                        + p.rateLabel() + " (by send time, " + Math.round(t.bucketSeconds()) + " s buckets)",
                "TTFT (s)", "Cached (%)", t.seconds(), left, right,
                List.of(new io.kvtier.bench.chart.Marker(t.killedAtSeconds(), "kill -9 " + t.killed())), 100);
    }

    private static void add(List<Path> files, ChartFiles chart) {
        files.add(chart.png());
        files.add(chart.svg());
    }

    static Map<String, List<FleetPoint>> byConfig(List<FleetPoint> points) {
        Map<String, List<FleetPoint>> byConfig = new LinkedHashMap<>();
        for (FleetPoint p : points) {
            byConfig.computeIfAbsent(p.config(), c -> new ArrayList<>()).add(p);
        }
        byConfig.values().forEach(list -> list.sort(Comparator.comparingDouble(FleetPoint::offeredRps)));
        return byConfig;
    }

    static XYChart rpsVsTps(Map<String, List<FleetPoint>> byConfig) {
        XYChart chart = ChartWriter.newChart("Throughput per GPU vs speed per user", "Tokens/s per user",
                "Requests/s per GPU");
        chart.getStyler().setYAxisMin(0.0); // x fits the data: speeds per user sit far from 0, and close together
        chart.getStyler().setYAxisDecimalPattern("0.###");
        byConfig.forEach((config, points) -> line(chart, config, points, p -> p.latency().tokensPerSecondPerUser(),
                FleetPoint::rpsPerGpu));
        return fitLegend(chart);
    }

    static XYChart ttftP90(Map<String, List<FleetPoint>> byConfig) {
        XYChart chart = ChartWriter.newChart("Time to first token, p90", "Offered requests/s", "TTFT p90 (s)");
        chart.getStyler().setXAxisMin(0.0);
        chart.getStyler().setYAxisMin(0.0);
        chart.getStyler().setYAxisDecimalPattern("0.###");
        byConfig.forEach((config, points) -> line(chart, config, points, FleetPoint::offeredRps,
                p -> p.latency().ttftP90()));
        return fitLegend(chart);
    }

    /**
     * One colour per configuration, one dash per tier (solid GPU, dashed kvtier memory, dotted kvtier disk); a tier
     * that served nothing at any of a configuration's points (memory and disk without offload) has no line.
     */
    static XYChart hitRate(Map<String, List<FleetPoint>> byConfig) {
        XYChart chart = ChartWriter.newChart("Prompt tokens served from cache, by tier", "Offered requests/s",
                "Hit rate (% of prompt tokens)");
        chart.getStyler().setXAxisMin(0.0);
        chart.getStyler().setYAxisMin(0.0);
        chart.getStyler().setYAxisMax(100.0);
        Color[] palette = chart.getStyler().getSeriesColors();
        int c = 0;
        for (Map.Entry<String, List<FleetPoint>> config : byConfig.entrySet()) {
            Color colour = palette[c++ % palette.length];
            tier(chart, config, Tier.GPU, colour);
            tier(chart, config, Tier.MEMORY, colour);
            tier(chart, config, Tier.DISK, colour);
        }
        return fitLegend(chart);
    }

    /**
     * Moves the legend to the right of the plot, one entry a line, when one row below it would run off the chart's
     * sides (XChart does not wrap it): about 8 pixels a character and 40 for each entry's sample line.
     */
    private static XYChart fitLegend(XYChart chart) {
        int width = chart.getSeriesMap().keySet().stream().mapToInt(name -> name.length() * 8 + 40).sum();
        if (width > ChartWriter.WIDTH - 40) {
            chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE);
            chart.getStyler().setLegendLayout(Styler.LegendLayout.Vertical);
        }
        return chart;
    }

    /** The tiers a prompt token's KV may come from, and how each one's line looks. */
    private enum Tier {
        GPU("GPU", p -> p.counters().gpuHitRate(), SeriesLines.SOLID, SeriesMarkers.CIRCLE),
        MEMORY("kvtier memory", p -> p.counters().memoryHitRate(), SeriesLines.DASH_DASH, SeriesMarkers.SQUARE),
        DISK("kvtier disk", p -> p.counters().diskHitRate(), SeriesLines.DOT_DOT, SeriesMarkers.DIAMOND);

        final String label;
        final ToDoubleFunction<FleetPoint> rate;
        final BasicStroke dash;
        final Marker marker;

        Tier(String label, ToDoubleFunction<FleetPoint> rate, BasicStroke dash, Marker marker) {
            this.label = label;
            this.rate = rate;
            this.dash = dash;
            this.marker = marker;
        }
    }

    private static void tier(XYChart chart, Map.Entry<String, List<FleetPoint>> config, Tier tier, Color colour) {
        if (tier != Tier.GPU && config.getValue().stream().allMatch(p -> tier.rate.applyAsDouble(p) == 0)) {
            return;
        }
        XYSeries series = line(chart, config.getKey() + ": " + tier.label, config.getValue(), FleetPoint::offeredRps,
                p -> tier.rate.applyAsDouble(p) * 100);
        if (series != null) {
            series.setLineColor(colour);
            series.setMarkerColor(colour);
            series.setLineStyle(tier.dash);
            series.setMarker(tier.marker);
        }
    }

    /** Adds the line of {@code points} without their NaN points; none when no point is left. */
    private static XYSeries line(XYChart chart, String name, List<FleetPoint> points, ToDoubleFunction<FleetPoint> x,
            ToDoubleFunction<FleetPoint> y) {
        List<double[]> xy = points.stream().map(p -> new double[] {x.applyAsDouble(p), y.applyAsDouble(p)})
                .filter(v -> Double.isFinite(v[0]) && Double.isFinite(v[1])).toList();
        if (xy.isEmpty()) {
            return null;
        }
        XYSeries series = chart.addSeries(name, xy.stream().mapToDouble(v -> v[0]).toArray(),
                xy.stream().mapToDouble(v -> v[1]).toArray());
        series.setMarker(SeriesMarkers.CIRCLE);
        return series;
    }
}
