package io.kvtier.server.value;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.store.memory.MemoryTier;
import io.kvtier.store.memory.MemoryValue;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A request's spool file: appends gathered into chunks and queued off the caller's thread, in order, with back-pressure
 * and failures kept; read back into store memory in place.
 */
class SpoolTest {
    @TempDir
    Path dir;

    private final ExecutorService io = Executors.newFixedThreadPool(2);

    @AfterEach
    void stop() throws InterruptedException {
        io.shutdown();
        assertThat(io.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void appendsLandInOrderAndAReadWaitsForThoseQueuedBeforeIt() {
        AtomicInteger drained = new AtomicInteger();
        Spool spool = new Spool(dir.resolve("a.spool.tmp"), io, PooledByteBufAllocator.DEFAULT, drained::incrementAndGet);
        byte[] payload = new byte[(3 << 20) + 12_345]; // three whole chunks and a partial one
        new Random(7).nextBytes(payload);
        long at = spool.allot(payload.length);
        ByteBuf src = Unpooled.wrappedBuffer(payload);
        for (int off = 0; off < payload.length; off += 65_536) { // as socket reads hand it over
            int n = Math.min(65_536, payload.length - off);
            spool.write(src, n, at + off);
        }
        assertThat(src.readableBytes()).as("the caller's buffer is consumed at once").isZero();
        spool.flush(); // the request's last payload arrived
        assertThat(spool.read(at, payload.length)).isEqualTo(payload);
        assertThat(spool.backlogged()).isFalse();
        spool.release();
        spool.release(); // the sink's reference, then the request's
        spool.written().join();
        awaitGone(dir.resolve("a.spool.tmp"));
    }

    @Test
    void payloadsReadBackStraightIntoStoreMemoryAcrossChunksAndPages() {
        Spool spool = new Spool(dir.resolve("d.spool.tmp"), io, PooledByteBufAllocator.DEFAULT, () -> { });
        Random random = new Random(11);
        int[] lengths = {1, 100, 16_384, MemoryTier.PAGE_SIZE * 3 + 7, (1 << 20) - 5, 2 << 20, 0, 4_000};
        byte[][] payloads = new byte[lengths.length][];
        long[] at = new long[lengths.length];
        for (int i = 0; i < lengths.length; i++) {
            payloads[i] = new byte[lengths[i]];
            random.nextBytes(payloads[i]);
            at[i] = spool.allot(lengths[i]);
            ByteBuf src = Unpooled.wrappedBuffer(payloads[i]);
            while (src.isReadable()) {
                spool.write(src, Math.min(src.readableBytes(), 1 + random.nextInt(70_000)), at[i] + src.readerIndex());
            }
        }
        spool.flush();
        spool.written().join();
        try (MemoryTier tier = new MemoryTier(256L * MemoryTier.PAGE_SIZE)) {
            for (int i = 0; i < lengths.length; i++) {
                MemoryValue value = tier.allocate(lengths[i]);
                spool.readInto(at[i], value);
                assertThat(value.written()).isEqualTo(lengths[i]);
                assertThat(value.toArray()).as("payload %d of %d bytes", i, lengths[i]).isEqualTo(payloads[i]);
                value.release();
            }
        }
        for (int i = 0; i <= lengths.length; i++) {
            spool.release(); // each payload's reference, then the request's
        }
        awaitGone(dir.resolve("d.spool.tmp"));
    }

    @Test
    void aTrickledPayloadFlushedAfterEveryReadLandsWhole() {
        Spool spool = new Spool(dir.resolve("f.spool.tmp"), io, PooledByteBufAllocator.DEFAULT, () -> { });
        byte[] payload = new byte[100_003];
        new Random(13).nextBytes(payload);
        long at = spool.allot(payload.length);
        ByteBuf src = Unpooled.wrappedBuffer(payload);
        Random reads = new Random(14);
        while (src.isReadable()) { // a few bytes a socket read, each pass over the input flushing what it appended
            spool.write(src, Math.min(src.readableBytes(), 1 + reads.nextInt(3_000)), at + src.readerIndex());
            spool.flush();
        }
        assertThat(spool.read(at, payload.length)).isEqualTo(payload);
        spool.release();
        spool.release();
        awaitGone(dir.resolve("f.spool.tmp"));
    }

    @Test
    void anAppendOutOfOrderIsRefused() {
        Spool spool = new Spool(dir.resolve("e.spool.tmp"), io, PooledByteBufAllocator.DEFAULT, () -> { });
        long at = spool.allot(20);
        spool.write(Unpooled.wrappedBuffer(new byte[10]), 10, at);
        assertThatThrownBy(() -> spool.write(Unpooled.wrappedBuffer(new byte[10]), 10, at + 11))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("expected 10");
        spool.flush();
        spool.release();
        spool.release();
    }

    @Test
    void morePendingThanTheBacklogAllowanceStopsReadingUntilHalfIsWritten() throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        ExecutorService slow = Executors.newSingleThreadExecutor();
        slow.execute(() -> {
            try {
                gate.await(); // the disk is "stuck" until the test lets it go
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        AtomicInteger drained = new AtomicInteger();
        Spool spool = new Spool(dir.resolve("b.spool.tmp"), slow, PooledByteBufAllocator.DEFAULT,
                drained::incrementAndGet);
        int chunk = 1 << 20;
        long length = Spool.HIGH_BACKLOG + 2L * chunk;
        long at = spool.allot(length);
        ByteBuf src = Unpooled.wrappedBuffer(new byte[(int) length]);
        for (long off = 0; off < length; off += chunk) {
            spool.write(src, chunk, at + off);
        }
        assertThat(spool.backlogged()).isTrue();
        assertThat(drained.get()).isZero();
        gate.countDown();
        spool.written().get(10, TimeUnit.SECONDS);
        assertThat(spool.backlogged()).isFalse();
        assertThat(drained.get()).as("resumed once, when half the allowance was left").isEqualTo(1);
        spool.release();
        slow.shutdown();
    }

    @Test
    void aFailedWriteFailsTheReadsAfterIt() throws Exception {
        Path file = dir.resolve("c.spool.tmp");
        Spool spool = new Spool(file, io, PooledByteBufAllocator.DEFAULT, () -> { });
        long at = spool.allot(10);
        spool.written().join();
        // A negative position makes FileChannel.write throw: the write fails on the I/O thread, not on the caller's.
        spool.write(Unpooled.wrappedBuffer(new byte[10]), 10, -1);
        spool.flush();
        assertThat(spool.written()).succeedsWithin(java.time.Duration.ofSeconds(10));
        assertThatThrownBy(() -> spool.read(at, 10)).isInstanceOf(java.io.UncheckedIOException.class)
                .hasMessageContaining("cannot write spool file");
        spool.release();
    }

    private static void awaitGone(Path file) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (Files.exists(file) && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(file).doesNotExist();
    }
}
