package io.kvtier.bench.limits;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Disk throughput on one scratch file: a sequential write in 8 MiB direct-buffer writes closed by an fsync, then
 * random 1 MiB reads at block-aligned offsets by concurrent readers, with O_DIRECT where the file system allows it so
 * that the page cache (which still holds the freshly written file) is bypassed. Stateless; each reader thread opens
 * its own channel and owns its buffer.
 */
final class DiskProbe {
    static final int WRITE_CHUNK = 8 << 20;
    static final int READ_BLOCK = 1 << 20;
    private static final int FALLBACK_ALIGNMENT = 4096;
    /**
     * O_DIRECT is com.sun.nio.file.ExtendedOpenOption.DIRECT (module jdk.unsupported), looked up by name because
     * javac flags every use of that class as internal API; null on a JDK without it.
     */
    private static final OpenOption DIRECT = directOption();

    /** What the sequential write did: bytes written and the rate including the final fsync. */
    record SequentialWrite(long bytes, long bytesPerSecond) {}

    private DiskProbe() {}

    /** Writes up to {@code maxBytes} (whole chunks) or until {@code limit} has passed, then fsyncs. */
    static SequentialWrite writeSequential(Path file, long maxBytes, Duration limit) throws IOException {
        ByteBuffer chunk = ByteBuffer.allocateDirect(WRITE_CHUNK);
        // Random bytes, so that a compressing or deduplicating file system cannot make the write cheaper.
        byte[] noise = new byte[WRITE_CHUNK];
        ThreadLocalRandom.current().nextBytes(noise);
        chunk.put(noise).flip();
        long written = 0;
        long start = System.nanoTime();
        long deadline = start + limit.toNanos();
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            while (written + WRITE_CHUNK <= maxBytes && (written == 0 || System.nanoTime() < deadline)) {
                chunk.rewind();
                while (chunk.hasRemaining()) {
                    written += channel.write(chunk);
                }
            }
            channel.force(true);
        }
        long nanos = System.nanoTime() - start;
        return new SequentialWrite(written, Math.round(written * 1e9 / nanos));
    }

    /** Whether {@code file} can be read with O_DIRECT; tmpfs and some network file systems refuse it. */
    static boolean supportsDirect(Path file) {
        if (DIRECT == null) {
            return false;
        }
        int alignment = alignment(file);
        try (FileChannel channel = open(file, true)) {
            channel.read(alignedBuffer(alignment, alignment), 0);
            return true;
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }

    /** Bytes per second of random {@link #READ_BLOCK} reads over the first {@code fileBytes} of {@code file}. */
    static long readRandom(Path file, long fileBytes, int readers, boolean direct, Duration time)
            throws IOException, InterruptedException {
        long blocks = fileBytes / READ_BLOCK;
        if (blocks < 1) {
            throw new IllegalArgumentException("file of " + fileBytes + " bytes holds no " + READ_BLOCK
                    + "-byte block");
        }
        int alignment = alignment(file);
        long start = System.nanoTime();
        long deadline = start + time.toNanos();
        long bytes = 0;
        try (ExecutorService pool = Executors.newFixedThreadPool(readers,
                Thread.ofPlatform().daemon().name("limits-disk-reader-", 0).factory())) {
            List<Future<Long>> results = new ArrayList<>();
            for (int i = 0; i < readers; i++) {
                results.add(pool.submit(() -> readUntil(file, blocks, alignment, direct, deadline)));
            }
            for (Future<Long> result : results) {
                bytes += get(result);
            }
        }
        long nanos = System.nanoTime() - start;
        return Math.round(bytes * 1e9 / nanos);
    }

    private static long readUntil(Path file, long blocks, int alignment, boolean direct, long deadline)
            throws IOException {
        ByteBuffer buffer = alignedBuffer(READ_BLOCK, alignment);
        ThreadLocalRandom random = ThreadLocalRandom.current();
        long bytes = 0;
        try (FileChannel channel = open(file, direct)) {
            while (System.nanoTime() < deadline) {
                long position = random.nextLong(blocks) * READ_BLOCK;
                buffer.clear();
                while (buffer.hasRemaining()) {
                    int n = channel.read(buffer, position + buffer.position());
                    if (n < 0) {
                        throw new IOException("unexpected end of " + file + " at " + (position + buffer.position()));
                    }
                }
                bytes += READ_BLOCK;
            }
        }
        return bytes;
    }

    private static long get(Future<Long> result) throws IOException, InterruptedException {
        try {
            return result.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            throw new IOException("disk reader failed: " + e.getCause(), e.getCause());
        }
    }

    private static FileChannel open(Path file, boolean direct) throws IOException {
        OpenOption[] options = direct
                ? new OpenOption[] {StandardOpenOption.READ, DIRECT}
                : new OpenOption[] {StandardOpenOption.READ};
        return FileChannel.open(file, options);
    }

    private static OpenOption directOption() {
        try {
            Class<?> options = Class.forName("com.sun.nio.file.ExtendedOpenOption");
            for (Object option : options.getEnumConstants()) {
                if (((Enum<?>) option).name().equals("DIRECT")) {
                    return (OpenOption) option;
                }
            }
            return null;
        } catch (ClassNotFoundException e) {
            return null;
        }
    }

    /** O_DIRECT needs buffer address, length and file offset aligned; the file store's block size suits all three. */
    static int alignment(Path file) {
        try {
            long size = Files.getFileStore(file).getBlockSize();
            return size > 0 && size <= READ_BLOCK && Long.bitCount(size) == 1 ? (int) size : FALLBACK_ALIGNMENT;
        } catch (IOException | UnsupportedOperationException e) {
            return FALLBACK_ALIGNMENT;
        }
    }

    /**
     * A direct buffer of exactly {@code bytes} starting at an {@code alignment} boundary. Exactly: an aligned slice can
     * be larger when the allocation happens to start aligned, and clear() would then let a read of a file's last
     * block run past its end ("unexpected end of ...", seen once in CI).
     */
    static ByteBuffer alignedBuffer(int bytes, int alignment) {
        return ByteBuffer.allocateDirect(bytes + alignment).alignedSlice(alignment).limit(bytes).slice();
    }
}
