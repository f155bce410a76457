package io.kvtier.bench.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FleetChartsTest {
    @TempDir
    Path dir;

    @Test
    void writesThreeChartsAsPngAndSvg() throws IOException {
        List<Path> files = FleetCharts.write(dir.resolve("charts"), FleetReportTest.points());

        assertThat(files).extracting(p -> p.getFileName().toString()).containsExactly("fleet-rps-vs-tps.png",
                "fleet-rps-vs-tps.svg", "fleet-ttft-p90.png", "fleet-ttft-p90.svg", "fleet-hit-rate.png",
                "fleet-hit-rate.svg", "fleet-kill-kvtier-dram-ssd-prefix-2.0-req-s.png",
                "fleet-kill-kvtier-dram-ssd-prefix-2.0-req-s.svg"); // the one point with a kill has its timeline
        for (Path file : files) {
            assertThat(file).isRegularFile().startsWith(dir.resolve("charts"));
            if (file.toString().endsWith(".png")) {
                BufferedImage image = ImageIO.read(file.toFile());
                assertThat(image.getWidth()).isEqualTo(960);
            } else {
                assertThat(Files.readString(file)).startsWith("<?xml").contains("<svg");
            }
        }
    }

    @Test
    void hitRatesHaveALinePerConfigurationAndTierThatServedAnything() {
        var chart = FleetCharts.hitRate(FleetCharts.byConfig(FleetReportTest.points()));
        assertThat(chart.getSeriesMap().keySet()).containsExactly("no offload / direct: GPU",
                "kvtier dram / direct: GPU", "kvtier dram / direct: kvtier memory", "kvtier dram+ssd / prefix: GPU",
                "kvtier dram+ssd / prefix: kvtier memory", "kvtier dram+ssd / prefix: kvtier disk");
        assertThat(chart.getSeriesMap().get("kvtier dram / direct: kvtier memory").getYData())
                .containsExactly(40.0, 20.0, 10.0); // ordered by rate
    }

    @Test
    void throughputPerGpuIsPlottedAgainstSpeedPerUserInRateOrder() {
        List<FleetPoint> points = new java.util.ArrayList<>(FleetReportTest.points());
        java.util.Collections.reverse(points);
        var chart = FleetCharts.rpsVsTps(FleetCharts.byConfig(points));
        assertThat(chart.getSeriesMap()).hasSize(3);
        var series = chart.getSeriesMap().get("no offload / direct");
        assertThat(series.getYData()).containsExactly(0.25, 0.5, 1.0); // 10, 20, 40 requests over 10 s on 4 GPUs
        assertThat(series.getXData()[0]).isGreaterThan(series.getXData()[2]); // slower decode at higher rates
    }

    @Test
    void pointsWithNothingMeasuredAreLeftOutRatherThanFailing() throws IOException {
        FleetPoint empty = new FleetPoint("none", "direct", "1 req/s", 1, 1, LatencyStats.of(List.of(), 1),
                new EngineCounters(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, Double.NaN, 0), FleetTimeline.EMPTY);
        assertThat(FleetCharts.write(dir, List.of(empty))).hasSize(6).allSatisfy(p -> assertThat(p).isRegularFile());
    }

    @Test
    void noPointsIsAnError() {
        assertThatThrownBy(() -> FleetCharts.write(dir, List.of())).hasMessageContaining("at least one point");
    }
}
