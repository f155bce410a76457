package io.kvtier.bench.limits;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttributeView;
import java.nio.file.attribute.FileStoreAttributeView;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MachineLimitsTest {
    private static final long PLAUSIBLE = 10_000_000;
    private static final long MiB = 1L << 20;

    @TempDir
    Path dir;

    @Test
    void measuresEveryLimitAsAPlausibleRateAndLeavesNoScratchFile() throws Exception {
        MachineLimitsResult result = MachineLimits.measure(dir, new LimitsOptions(64 * MiB,
                Duration.ofMillis(300)));

        assertThat(result.loopbackOneStreamBytesPerSecond()).isGreaterThan(PLAUSIBLE);
        assertThat(result.loopbackTwoStreamsBytesPerSecond()).isGreaterThan(PLAUSIBLE);
        assertThat(result.diskSequentialWriteBytesPerSecond()).isGreaterThan(PLAUSIBLE);
        assertThat(result.diskRandomReadOneReaderBytesPerSecond()).isGreaterThan(PLAUSIBLE);
        assertThat(result.diskRandomReadFourReadersBytesPerSecond()).isGreaterThan(PLAUSIBLE);
        assertThat(result.fileBytes()).isPositive().isLessThanOrEqualTo(64 * MiB);
        assertThat(result.machine().cores()).isEqualTo(Runtime.getRuntime().availableProcessors());
        assertThat(result.machine().fileSystem()).isNotBlank();
        try (Stream<Path> left = Files.list(dir)) {
            assertThat(left).isEmpty();
        }
    }

    @Test
    void jsonRoundTripsEveryField() throws Exception {
        MachineLimitsResult result = MachineLimits.measure(dir, new LimitsOptions(16 * MiB, Duration.ofMillis(50)));

        assertThat(MachineLimitsResult.fromJson(result.toJson())).isEqualTo(result);
    }

    @Test
    void summaryNamesBufferedReadsWhenDirectIoWasUnavailable() throws Exception {
        MachineLimitsResult direct = MachineLimits.measure(dir, new LimitsOptions(16 * MiB, Duration.ofMillis(50)));
        MachineLimitsResult buffered = new MachineLimitsResult(1, 1, 1, 1, 1, false, 1, 1, direct.machine());

        assertThat(buffered.summaryLines()).hasSize(5).anyMatch(l -> l.contains("BUFFERED"));
    }

    @Test
    void shrinksTheScratchFileToLeaveHalfTheFreeSpace() throws IOException {
        assertThat(MachineLimits.scratchFileBytes(new FreeSpace(100 * MiB), 1L << 30, dir)).isEqualTo(48 * MiB);
        assertThat(MachineLimits.scratchFileBytes(new FreeSpace(1L << 40), 1L << 30, dir)).isEqualTo(1L << 30);
    }

    @Test
    void refusesADirectoryWithoutRoomForTheSmallestFile() {
        assertThatThrownBy(() -> MachineLimits.scratchFileBytes(new FreeSpace(20 * MiB), 1L << 30, dir))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("20971520 bytes usable");
    }

    @Test
    void optionsNameTheValueAndTheLimit() {
        assertThatThrownBy(() -> new LimitsOptions(MiB, Duration.ofSeconds(1)))
                .hasMessage("scratch file size 1048576 is below the minimum 16777216");
        assertThatThrownBy(() -> new LimitsOptions(64 * MiB, Duration.ofMinutes(5)))
                .hasMessage("measure time PT5M must be between PT0.05S and PT1M");
    }

    @Test
    void fromJsonNamesAMissingField() {
        assertThatThrownBy(() -> MachineLimitsResult.fromJson("{\"machine\": {}}"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("\"cores\"");
    }

    /** A file store that only knows how much space is free. */
    private static final class FreeSpace extends FileStore {
        private final long usable;

        FreeSpace(long usable) {
            this.usable = usable;
        }

        @Override public long getUsableSpace() { return usable; }
        @Override public long getUnallocatedSpace() { return usable; }
        @Override public long getTotalSpace() { return usable; }
        @Override public String name() { return "fake"; }
        @Override public String type() { return "fake"; }
        @Override public boolean isReadOnly() { return false; }
        @Override public boolean supportsFileAttributeView(Class<? extends FileAttributeView> type) { return false; }
        @Override public boolean supportsFileAttributeView(String name) { return false; }
        @Override public <V extends FileStoreAttributeView> V getFileStoreAttributeView(Class<V> type) { return null; }
        @Override public Object getAttribute(String attribute) { return null; }
    }
}
