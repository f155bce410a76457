package io.kvtier.bench.limits;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DiskProbeTest {
    private static final long MiB = 1L << 20;

    @TempDir
    Path dir;

    @Test
    void sequentialWriteStopsAtTheLastWholeChunkThatFits() throws Exception {
        Path file = Files.createFile(dir.resolve("scratch"));

        DiskProbe.SequentialWrite write = DiskProbe.writeSequential(file, 20 * MiB, Duration.ofSeconds(5));

        assertThat(write.bytes()).isEqualTo(16 * MiB);
        assertThat(Files.size(file)).isEqualTo(16 * MiB);
        assertThat(write.bytesPerSecond()).isPositive();
    }

    @Test
    void bufferedReadsServeAsTheFallbackWhereDirectIoIsRefused() throws Exception {
        Path file = Files.createFile(dir.resolve("scratch"));
        DiskProbe.writeSequential(file, 16 * MiB, Duration.ofSeconds(5));

        long rate = DiskProbe.readRandom(file, 16 * MiB, 2, false, Duration.ofMillis(100));

        assertThat(rate).isGreaterThan(10_000_000);
    }

    @Test
    void alignedReadBuffersHoldExactlyOneBlockWhateverTheAllocationsAlignment() {
        for (int i = 0; i < 200; i++) {
            java.nio.ByteBuffer buffer = DiskProbe.alignedBuffer(DiskProbe.READ_BLOCK, 4096);
            assertThat(buffer.capacity()).isEqualTo(DiskProbe.READ_BLOCK);
            assertThat(buffer.alignmentOffset(0, 4096)).isZero();
            assertThat(buffer.clear().remaining()).isEqualTo(DiskProbe.READ_BLOCK);
        }
    }

    @Test
    void alignmentIsAPowerOfTwoNoLargerThanARead() {
        int alignment = DiskProbe.alignment(dir);

        assertThat(Integer.bitCount(alignment)).isEqualTo(1);
        assertThat(alignment).isBetween(512, DiskProbe.READ_BLOCK);
    }
}
