package io.kvtier.common.chart;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.VectorGraphicsEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.XYStyler;

/**
 * Creates charts in the house style (960 x 600, white, Tableau colours, legend below) and writes each as
 * {@code <prefix>.png} and {@code <prefix>.svg}, or as one file. Shared by the benchmark's charts and
 * {@code kvtier simulate}'s. Stateless; safe from any thread once AWT has started headless.
 */
public final class ChartWriter {
    public static final int WIDTH = 960;
    public static final int HEIGHT = 600;
    /** Dashed grey, for horizontal reference lines such as machine limits. */
    public static final BasicStroke LIMIT_STROKE = new BasicStroke(1.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER,
            10f, new float[] {8f, 6f}, 0f);
    public static final Color LIMIT_COLOR = new Color(90, 90, 90);
    /** Dark, distinct colours (Tableau 10); the first goes to the first system, which is kvtier by convention. */
    private static final Color[] PALETTE = {new Color(31, 119, 180), new Color(214, 39, 40), new Color(44, 160, 44),
        new Color(148, 103, 189), new Color(140, 86, 75), new Color(23, 190, 207)};
    private static final Pattern DECIMALS = Pattern.compile("(\\d\\.\\d)\\d+");
    private static final Pattern STYLE = Pattern.compile("style=\"([^\"]*)\"");
    private static final Pattern SEGMENT = Pattern.compile(
            "<line (style=\"[^\"]*\") x1=\"([^\"]*)\" x2=\"([^\"]*)\" y1=\"([^\"]*)\" y2=\"([^\"]*)\"/>\\s*");

    static {
        // Charts are drawn off-screen, on machines (CI) with no display; an explicit -Djava.awt.headless wins.
        if (System.getProperty("java.awt.headless") == null) {
            System.setProperty("java.awt.headless", "true");
        }
    }

    private ChartWriter() {}

    /** Consecutive {@code <line>}s of one style where each starts at the previous one's end become a polyline. */
    static String joinSegments(String svg) {
        Matcher m = SEGMENT.matcher(svg);
        StringBuilder out = new StringBuilder(svg.length());
        int copied = 0;
        while (m.find(copied)) {
            out.append(svg, copied, m.start());
            int start = m.start();
            int firstEnd = m.end();
            String style = m.group(1);
            List<String> points = new ArrayList<>(List.of(m.group(2) + "," + m.group(4), m.group(3) + ","
                    + m.group(5)));
            int end = firstEnd;
            while (m.find(end) && m.start() == end && m.group(1).equals(style)
                    && (m.group(2) + "," + m.group(4)).equals(points.getLast())) {
                points.add(m.group(3) + "," + m.group(5));
                end = m.end();
            }
            if (points.size() == 2) {
                out.append(svg, start, firstEnd);
            } else {
                out.append("<polyline ").append(style).append(" points=\"").append(String.join(" ", points))
                        .append("\"/>\n");
            }
            copied = end;
        }
        out.append(svg, copied, svg.length());
        return out.toString();
    }

    /** An empty XY chart in the house style. */
    public static XYChart newChart(String title, String xTitle, String yTitle) {
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title).xAxisTitle(xTitle)
                .yAxisTitle(yTitle).build();
        XYStyler styler = chart.getStyler();
        styler.setChartBackgroundColor(Color.WHITE);
        styler.setPlotBackgroundColor(Color.WHITE);
        styler.setPlotBorderVisible(true);
        styler.setLegendPosition(Styler.LegendPosition.OutsideS);
        styler.setLegendLayout(Styler.LegendLayout.Horizontal);
        styler.setLegendBorderColor(Color.WHITE);
        styler.setChartTitleFont(new Font(Font.SANS_SERIF, Font.BOLD, 18));
        styler.setLegendFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
        styler.setAxisTitleFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
        styler.setAxisTickLabelsFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        styler.setPlotGridLinesColor(new Color(220, 220, 220));
        styler.setMarkerSize(8);
        styler.setSeriesColors(PALETTE);
        return chart;
    }

    /** Writes {@code chart} as {@code <outPrefix>.png} and {@code <outPrefix>.svg}, creating the directory. */
    public static ChartFiles write(XYChart chart, Path outPrefix) throws IOException {
        Path png = sibling(outPrefix, ".png");
        Path svg = sibling(outPrefix, ".svg");
        Path parent = png.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        try (OutputStream out = Files.newOutputStream(png)) {
            BitmapEncoder.saveBitmap(chart, out, BitmapEncoder.BitmapFormat.PNG);
        }
        ByteArrayOutputStream vector = new ByteArrayOutputStream();
        VectorGraphicsEncoder.saveVectorGraphic(chart, vector, VectorGraphicsEncoder.VectorGraphicsFormat.SVG);
        Files.writeString(svg, compact(vector.toString(StandardCharsets.UTF_8)), StandardCharsets.UTF_8);
        return new ChartFiles(png, svg);
    }

    /** Writes {@code chart} to {@code file} alone, as a PNG or an SVG by its extension ({@code .png}, {@code .svg}). */
    public static Path writeFile(XYChart chart, Path file) throws IOException {
        String name = file.getFileName().toString().toLowerCase(java.util.Locale.ROOT);
        if (!name.endsWith(".png") && !name.endsWith(".svg")) {
            throw new IllegalArgumentException("chart file " + file + " must end in .png or .svg");
        }
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        if (name.endsWith(".png")) {
            try (OutputStream out = Files.newOutputStream(file)) {
                BitmapEncoder.saveBitmap(chart, out, BitmapEncoder.BitmapFormat.PNG);
            }
        } else {
            ByteArrayOutputStream vector = new ByteArrayOutputStream();
            VectorGraphicsEncoder.saveVectorGraphic(chart, vector, VectorGraphicsEncoder.VectorGraphicsFormat.SVG);
            Files.writeString(file, compact(vector.toString(StandardCharsets.UTF_8)), StandardCharsets.UTF_8);
        }
        return file;
    }

    /**
     * Shrinks the encoder's SVG without changing the picture: coordinates cut to one decimal (text is drawn as
     * outlines with ten-digit coordinates; a tenth of a pixel is invisible) and each distinct inline style turned
     * into a CSS class (every segment of a line is a {@code <line>} with its own 120-character style), and runs of
     * segments that continue each other joined into one {@code <polyline>}. A 45 s timeline went from 1.1 MB to
     * about 150 KB.
     */
    static String compact(String svg) {
        String cut = joinSegments(DECIMALS.matcher(svg).replaceAll("$1"));
        Map<String, String> classes = new LinkedHashMap<>();
        Matcher m = STYLE.matcher(cut);
        StringBuilder out = new StringBuilder(cut.length());
        while (m.find()) {
            String name = classes.computeIfAbsent(m.group(1), style -> "s" + classes.size());
            m.appendReplacement(out, "class=\"" + name + "\"");
        }
        m.appendTail(out);
        int svgTag = out.indexOf("<svg");
        int afterTag = svgTag < 0 ? -1 : out.indexOf(">", svgTag) + 1;
        if (classes.isEmpty() || afterTag <= 0) {
            return cut;
        }
        StringBuilder css = new StringBuilder("\n<style>");
        classes.forEach((style, name) -> css.append('.').append(name).append('{').append(style).append('}'));
        return out.insert(afterTag, css.append("</style>")).toString();
    }

    private static Path sibling(Path prefix, String extension) {
        return prefix.resolveSibling(prefix.getFileName() + extension);
    }
}
