package io.kvtier.bench.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FleetResultsTest {
    @TempDir
    Path dir;

    @Test
    void aWrittenResultReadsBackPointForPoint() throws IOException {
        List<FleetPoint> points = FleetReportTest.points();
        FleetReport.write(dir, FleetReportTest.RUN, points);

        List<FleetPoint> read = FleetResults.read(dir.resolve(FleetReport.JSON_FILE));

        assertThat(read).isEqualTo(points); // NaN members (none measured, no fetch) and the kill's timeline included
        assertThat(read.getLast().timeline().killed()).isEqualTo("n3");
        assertThat(read.getFirst().counters().fetchBytesPerSecond()).isNaN();
    }

    @Test
    void anotherJsonIsRefusedWithItsName() throws IOException {
        Path other = Files.writeString(dir.resolve("compare.json"), "{\"schema\": \"kvtier-bench-compare/1\"}");
        assertThatThrownBy(() -> FleetResults.read(other)).isInstanceOf(IOException.class)
                .hasMessageContaining("compare.json").hasMessageContaining("not a fleet benchmark result");
        Path broken = Files.writeString(dir.resolve("broken.json"), "{\"schema\": ");
        assertThatThrownBy(() -> FleetResults.read(broken)).isInstanceOf(IOException.class)
                .hasMessageContaining("not JSON");
    }
}
