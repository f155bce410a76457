package io.kvtier.bench.chart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TimelineChartTest {
    @TempDir
    Path dir;

    @Test
    void writesPngAndSvgWithBothAxesAndTheMarkers() throws Exception {
        double[] t = {0.05, 0.15, 0.25, 0.35};
        Map<String, double[]> left = new LinkedHashMap<>();
        left.put("GET ok/s", new double[] {1000, 900, 0, 950});
        left.put("SET ok/s", new double[] {800, 700, 0, 820});

        ChartFiles files = TimelineChart.write(dir.resolve("failover-timeline"), "Failover", "ops/s", "errors/s", t,
                left, Map.of("errors/s", new double[] {0, 0, 40, 0}),
                List.of(new Marker(0.2, "kill -9 n2"), new Marker(0.3, "epoch 4: 2 nodes")));

        assertThat(ImageIO.read(files.png().toFile()).getWidth()).isEqualTo(960);
        String svg = Files.readString(files.svg(), StandardCharsets.UTF_8);
        assertThat(svg).startsWith("<?xml").contains("<svg").doesNotContainPattern("\\d\\.\\d\\d");
        assertThat(files.svg()).isRegularFile();
    }

    @Test
    void svgsAreCompactedWithoutLosingTheirStyles() {
        String svg = "<?xml version=\"1.0\"?>\n<svg width=\"9\"><line style=\"stroke:red;\" x1=\"1.23456\"/>"
                + "<line style=\"stroke:blue;\" x1=\"2\"/><line style=\"stroke:red;\" x1=\"3.0\"/></svg>";

        assertThat(ChartWriter.compact(svg)).isEqualTo("<?xml version=\"1.0\"?>\n<svg width=\"9\">\n"
                + "<style>.s0{stroke:red;}.s1{stroke:blue;}</style><line class=\"s0\" x1=\"1.2\"/>"
                + "<line class=\"s1\" x1=\"2\"/><line class=\"s0\" x1=\"3.0\"/></svg>");
    }

    @Test
    void segmentsThatContinueEachOtherBecomeOnePolyline() {
        String lines = "<line style=\"a\" x1=\"1\" x2=\"2\" y1=\"5\" y2=\"6\"/>\n"
                + "<line style=\"a\" x1=\"2\" x2=\"3\" y1=\"6\" y2=\"4\"/>\n"
                + "<line style=\"b\" x1=\"3\" x2=\"4\" y1=\"4\" y2=\"4\"/>\n"
                + "<line style=\"a\" x1=\"9\" x2=\"8\" y1=\"0\" y2=\"0\"/>";

        assertThat(ChartWriter.joinSegments(lines)).isEqualTo("<polyline style=\"a\" points=\"1,5 2,6 3,4\"/>\n"
                + "<line style=\"b\" x1=\"3\" x2=\"4\" y1=\"4\" y2=\"4\"/>\n"
                + "<line style=\"a\" x1=\"9\" x2=\"8\" y1=\"0\" y2=\"0\"/>");
    }

    @Test
    void seriesOfAnotherLengthThanTheTimesAreRefused() {
        assertThatThrownBy(() -> TimelineChart.write(dir.resolve("x"), "x", "a", "b", new double[] {1, 2},
                Map.of("s", new double[] {1}), Map.of(), List.of())).hasMessageContaining("has 1 points for 2 times");
    }

    @Test
    void axisTopsAreRoundWithHeadroom() {
        assertThat(TimelineChart.niceTop(950)).isEqualTo(2000);
        assertThat(TimelineChart.niceTop(3100)).isEqualTo(5000);
        assertThat(TimelineChart.niceTop(0)).isEqualTo(1);
    }
}
