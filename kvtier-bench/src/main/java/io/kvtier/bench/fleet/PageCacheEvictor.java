package io.kvtier.bench.fleet;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/*
 * Why a benchmark evicts kvtier's disk files from the page cache: kvtier's disk tier reads through the OS page cache,
 * and --kv-bytes-scale shrinks the data a fleet point writes (an eighth, say) but not the machine's RAM, so nearly all
 * of a scaled-down disk tier would stay cached and "disk" hits would be memory reads. A real inference server's page
 * cache holds a share of its SSD tier too, but that share is set by its own DRAM, not by this machine's. So, every
 * period, each regular file under the nodes' data directories is opened and posix_fadvise(POSIX_FADV_DONTNEED) asks
 * the kernel to drop its clean pages (dirty ones are written back first and dropped on a later pass): disk-tier reads
 * then come from the disk, as BENCHMARKS.md's fleet section states.
 */

/**
 * Drops kvtier's disk files from the page cache every period while running (Linux; elsewhere it does nothing and
 * says so). Owns its thread: {@link #close} stops it.
 */
final class PageCacheEvictor implements AutoCloseable {
    private static final int O_RDONLY = 0;
    private static final int POSIX_FADV_DONTNEED = 4;
    private static final MethodHandle[] CALLS = link();

    private final Path dir;
    private final Duration period;
    private final Thread thread;
    private final AtomicLong passes = new AtomicLong();
    private volatile boolean closed;

    private PageCacheEvictor(Path dir, Duration period) {
        this.dir = dir;
        this.period = period;
        this.thread = Thread.ofPlatform().daemon().name("fleet-page-cache-evictor").unstarted(this::loop);
    }

    /** Whether this platform has the calls (Linux's libc). */
    static boolean available() {
        return CALLS != null;
    }

    /** Starts evicting the files under {@code dir} every {@code period}; does nothing where {@link #available} is false. */
    static PageCacheEvictor start(Path dir, Duration period) {
        PageCacheEvictor e = new PageCacheEvictor(dir, period);
        if (available()) {
            e.thread.start();
        }
        return e;
    }

    /** Passes over the files so far. */
    long passes() {
        return passes.get();
    }

    private void loop() {
        while (!closed) {
            evictOnce(dir);
            passes.incrementAndGet();
            try {
                Thread.sleep(period);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** One pass: every regular file under {@code dir}; files that vanish or cannot be opened are skipped. */
    static void evictOnce(Path dir) {
        if (!available()) {
            return;
        }
        List<Path> files;
        try (Stream<Path> walk = Files.walk(dir)) {
            files = walk.filter(Files::isRegularFile).toList();
        } catch (IOException | UncheckedIOException gone) {
            return; // the node is starting or the point is over
        }
        try (Arena arena = Arena.ofConfined()) {
            for (Path f : files) {
                try {
                    int fd = (int) CALLS[0].invokeExact(arena.allocateFrom(f.toString()), O_RDONLY);
                    if (fd >= 0) { // else it is gone: nothing to drop
                        try {
                            int advised = (int) CALLS[1].invokeExact(fd, 0L, 0L, POSIX_FADV_DONTNEED);
                        } finally {
                            int closedFd = (int) CALLS[2].invokeExact(fd);
                        }
                    }
                } catch (Throwable t) {
                    throw new IllegalStateException("posix_fadvise of " + f + " failed", t);
                }
            }
        }
    }

    private static MethodHandle[] link() {
        if (!System.getProperty("os.name", "").startsWith("Linux")) {
            return null;
        }
        try {
            Linker linker = Linker.nativeLinker();
            SymbolLookup libc = linker.defaultLookup();
            return new MethodHandle[] {
                linker.downcallHandle(libc.findOrThrow("open"), FunctionDescriptor.of(ValueLayout.JAVA_INT,
                        ValueLayout.ADDRESS, ValueLayout.JAVA_INT), Linker.Option.firstVariadicArg(2)),
                linker.downcallHandle(libc.findOrThrow("posix_fadvise"), FunctionDescriptor.of(ValueLayout.JAVA_INT,
                        ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT)),
                linker.downcallHandle(libc.findOrThrow("close"), FunctionDescriptor.of(ValueLayout.JAVA_INT,
                        ValueLayout.JAVA_INT))};
        } catch (RuntimeException e) {
            return null;
        }
    }

    @Override
    public void close() {
        closed = true;
        thread.interrupt();
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
