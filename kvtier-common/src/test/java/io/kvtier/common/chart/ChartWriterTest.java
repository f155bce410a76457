package io.kvtier.common.chart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class ChartWriterTest {
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
    void sizesAreLabelledInBinaryUnitsAtWholePowersOfTwo() {
        assertThat(ChartData.binarySizeLabel(18)).isEqualTo("256 KiB");
        assertThat(ChartData.binarySizeLabel(20)).isEqualTo("1 MiB");
        assertThat(ChartData.binarySizeLabel(25)).isEqualTo("32 MiB");
        assertThat(ChartData.binarySizeLabel(19.5)).isEmpty();
        assertThat(ChartData.log2("kvtier", 1L << 20)).isEqualTo(20.0);
    }

    @Test
    void dataThatCannotBePlottedIsRefusedNamingTheSeries() {
        assertThatThrownBy(() -> ChartData.requireSeries(Map.of())).hasMessageContaining("at least one system");
        assertThatThrownBy(() -> ChartData.requirePoints("Redis", new TreeMap<Long, Double>()))
                .hasMessageContaining("\"Redis\" has no points");
        assertThatThrownBy(() -> ChartData.percent("Redis", 25.0)).hasMessageContaining("hit rate 25.0");
        assertThatThrownBy(() -> ChartData.log2("kvtier", 0)).hasMessageContaining("value size 0");
    }
}
