package io.kvtier.bench.chart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.common.chart.ChartFiles;
import io.kvtier.common.chart.ChartWriter;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import javax.imageio.ImageIO;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ChartsTest {
    private static final long KiB = 1L << 10;
    private static final long MiB = 1L << 20;

    @TempDir
    Path dir;

    @Test
    void throughputChartIsWrittenAsPngAndSvgWithLimitLines() throws IOException {
        Map<String, SortedMap<Long, Double>> bySystem = new LinkedHashMap<>();
        bySystem.put("kvtier", new TreeMap<>(Map.of(256 * KiB, 2.1, MiB, 3.2, 4 * MiB, 3.6, 32 * MiB, 3.9)));
        bySystem.put("Redis", new TreeMap<>(Map.of(256 * KiB, 1.9, MiB, 2.4, 4 * MiB, 2.2, 32 * MiB, 1.6)));

        ChartFiles files = Charts.throughputVsValueSize(dir.resolve("charts/throughput"), "GET throughput", bySystem,
                List.of(new LimitLine("loopback TCP, 1 stream", 4.0)));

        assertThat(files.png()).isEqualTo(dir.resolve("charts/throughput.png"));
        assertWritten(files);
    }

    @Test
    void latencyChartIsWrittenFromSortedMilliseconds() throws IOException {
        Random random = new Random(7);
        double[] kvtier = random.doubles(10_000, 0.5, 3).sorted().toArray();
        double[] redis = random.doubles(500, 1, 20).sorted().toArray();
        Map<String, double[]> bySystem = new LinkedHashMap<>();
        bySystem.put("kvtier", kvtier);
        bySystem.put("Redis", redis);

        assertWritten(Charts.latencyCdf(dir.resolve("latency"), "GET 1 MiB latency", bySystem));
    }

    @Test
    void latencyChartIsWrittenFromHistogramsInAnyUnit() throws IOException {
        Histogram nanos = new Histogram(3);
        Histogram micros = new Histogram(3);
        for (int i = 1; i <= 1000; i++) {
            nanos.recordValue(i * 1000L);
            micros.recordValue(i * 2L);
        }

        assertWritten(Charts.latencyCdfOfHistograms(dir.resolve("latency-hdr"), "latency",
                Map.of("kvtier", nanos, "Redis", micros), TimeUnit.NANOSECONDS));
    }

    @Test
    void hitRateChartIsWritten() throws IOException {
        Map<String, SortedMap<Double, Double>> bySystem = new LinkedHashMap<>();
        bySystem.put("kvtier", new TreeMap<>(Map.of(0.5, 1.0, 1.0, 1.0, 2.0, 1.0, 4.0, 1.0)));
        bySystem.put("Redis", new TreeMap<>(Map.of(0.5, 1.0, 1.0, 0.97, 2.0, 0.5, 4.0, 0.25)));

        assertWritten(Charts.hitRateVsWorkingSet(dir.resolve("hit-rate"), "overflow", bySystem));
    }

    @Test
    void aSingleValueSizeStillMakesAChart() throws IOException {
        assertWritten(Charts.throughputVsValueSize(dir.resolve("one"), "one size",
                Map.of("kvtier", new TreeMap<>(Map.of(MiB, 3.0)))));
    }

    @Test
    void rejectsDataThatCannotBePlotted() {
        assertThatThrownBy(() -> Charts.hitRateVsWorkingSet(dir.resolve("x"), "t", Map.of()))
                .hasMessageContaining("at least one system");
        assertThatThrownBy(() -> Charts.hitRateVsWorkingSet(dir.resolve("x"), "t",
                Map.of("Redis", new TreeMap<>(Map.of(1.0, 25.0))))).hasMessageContaining("hit rate 25.0");
        assertThatThrownBy(() -> Charts.latencyCdf(dir.resolve("x"), "t", Map.of("kvtier", new double[0])))
                .hasMessageContaining("\"kvtier\" has no latencies");
        assertThatThrownBy(() -> Charts.throughputVsValueSize(dir.resolve("x"), "t",
                Map.of("kvtier", new TreeMap<>(Map.of(0L, 1.0))))).hasMessageContaining("value size 0");
        assertThatThrownBy(() -> new LimitLine("disk", 0)).hasMessageContaining("must be positive");
    }

    @Test
    void axisLabelsReadAsRatiosAndMilliseconds() {
        assertThat(Charts.ratioLabel(0.5)).isEqualTo("0.5x");
        assertThat(Charts.ratioLabel(2.0000000001)).isEqualTo("2x");
        assertThat(Charts.millisLabel(0)).isEqualTo("1");
        assertThat(Charts.millisLabel(Math.log10(0.25))).isEqualTo("0.25");
        assertThat(Charts.millisLabel(Math.log10(120))).isEqualTo("120");
    }

    private static void assertWritten(ChartFiles files) throws IOException {
        assertThat(files.png()).isRegularFile();
        assertThat(files.svg()).isRegularFile();
        BufferedImage image = ImageIO.read(files.png().toFile());
        assertThat(image).isNotNull();
        assertThat(image.getWidth()).isEqualTo(ChartWriter.WIDTH);
        assertThat(image.getHeight()).isEqualTo(ChartWriter.HEIGHT);
        byte[] head = Arrays.copyOf(Files.readAllBytes(files.svg()), 64);
        assertThat(new String(head, StandardCharsets.UTF_8).stripLeading()).matches("(?s)(<\\?xml|<svg).*");
    }
}
