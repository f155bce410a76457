package io.kvtier.bench.chart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.common.chart.ChartFiles;
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
