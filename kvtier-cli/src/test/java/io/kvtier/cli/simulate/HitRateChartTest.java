package io.kvtier.cli.simulate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.common.chart.ChartWriter;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HitRateChartTest {
    @TempDir
    Path dir;

    @Test
    void theChartIsWrittenAsTheFileNamed() throws IOException {
        long gib = 1L << 30;
        Map<String, SortedMap<Long, Double>> byMemory = new LinkedHashMap<>();
        byMemory.put("memory 16 GiB", new TreeMap<>(Map.of(16 * gib, 0.1, 272 * gib, 0.5, 1040 * gib, 0.8)));
        byMemory.put("memory 64 GiB", new TreeMap<>(Map.of(64 * gib, 0.3, 320 * gib, 0.6, 1088 * gib, 0.8)));

        Path png = HitRateChart.write(dir.resolve("sweep.png"), "hit rate", byMemory);
        Path svg = HitRateChart.write(dir.resolve("sweep.svg"), "hit rate", byMemory);

        BufferedImage image = ImageIO.read(png.toFile());
        assertThat(image.getWidth()).isEqualTo(ChartWriter.WIDTH);
        assertThat(Files.readString(svg, StandardCharsets.UTF_8)).contains("<svg").contains("rgb(214,39,40)");
        assertThat(dir.resolve("sweep.svg.png")).doesNotExist();
        assertThatThrownBy(() -> HitRateChart.write(dir.resolve("sweep.jpg"), "hit rate", byMemory))
                .hasMessageContaining("must end in .png or .svg");
    }
}
