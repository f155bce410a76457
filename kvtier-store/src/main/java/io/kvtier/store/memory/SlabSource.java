package io.kvtier.store.memory;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Why not Arena.allocate: it zero-fills the whole slab before returning, and the memory tier creates slabs on
 * demand, under its lock, on the event loop of the write that needs the first page of the slab. Filling 64 MiB (and
 * faulting in its 16,384 pages) takes 36-54 ms on the benchmark machine, during which that loop's connections and
 * every other writer wait; and the kernel had already zeroed each page once when it faulted it in.
 *
 * An anonymous private mmap costs microseconds: the kernel hands out zeroed pages lazily, as the values written into
 * them touch them, so the cost spreads over the writes that need it and RSS grows with use exactly as before (pages
 * never touched are never resident, where Arena.allocate made a whole slab resident at once); nothing is zeroed
 * twice. The mapping is tied to the tier's arena, whose close() unmaps it: one owner, freed once. After that, any use
 * of a page's address (a socket write still pending) would fault, so the server stops its event loops before it
 * closes the store.
 *
 * Tried and dropped: madvise(MADV_HUGEPAGE); slabs now ask for MADV_NOHUGEPAGE, since systems with THP "always"
 * would otherwise do the same on their own. Faulting in 2 MiB pages (zeroing them, compacting memory to find them)
 * inside the socket reads that fill the values cut 1 MiB SET throughput by about a quarter and doubled its p99
 * (3.4 against 4.3 GB/s, p99 8-10 against 4 ms, 4 connections, same run); GETs gained nothing measurable.
 */

/**
 * Supplies the memory tier's slabs as anonymous mappings that the kernel fills on first touch, falling back to
 * {@link Arena#allocate} where mmap cannot be called (not Linux, or native access denied). Thread-safe (stateless).
 */
final class SlabSource {
    private static final Logger log = LoggerFactory.getLogger(SlabSource.class);

    private static final int PROT_READ = 0x1;
    private static final int PROT_WRITE = 0x2;
    private static final int MAP_SHARED = 0x01;
    private static final int MAP_PRIVATE = 0x02;
    private static final int MFD_CLOEXEC = 0x1;
    private static final int MAP_ANONYMOUS = 0x20;
    private static final int MADV_NOHUGEPAGE = 15;
    private static final long MAP_FAILED = -1L;

    private static final Optional<Calls> CALLS = Calls.link();

    private SlabSource() {
    }

    /** Whether slabs come from mmap (true) or from the arena's zero-filled allocations (false). */
    static boolean mapsSlabs() {
        return CALLS.isPresent();
    }

    /** Whether shared slabs ({@link #allocateShared}) can be made here: Linux, with native access. */
    static boolean sharesSlabs() {
        return CALLS.isPresent() && CALLS.get().memfdCreate != null;
    }

    /** A shared slab: its bytes, and the memfd that other processes of the host may map ({@code /proc/PID/fd/FD}). */
    record Shared(MemorySegment segment, int fd) {
    }

    /**
     * A slab of {@code bytes} in a memfd of its own, mapped shared, so that a client on the same host can map the same
     * pages (KVC.SHM): the kernel fills its pages on first touch, as for an anonymous slab. Lives until
     * {@code arena} closes, which unmaps it and closes the memfd; the pages go when the last mapping of any
     * process goes.
     *
     * @throws SlabMapException when the system will not make or map it; nothing is left open
     */
    static Shared allocateShared(Arena arena, long bytes, String name) {
        if (!sharesSlabs()) {
            throw new SlabMapException("shared memory slabs need Linux (memfd_create) and native access", null);
        }
        Calls calls = CALLS.get();
        int fd = calls.memfd(name, bytes);
        long address;
        try {
            address = calls.mapShared(fd, bytes);
        } catch (SlabMapException e) {
            calls.close(fd);
            throw e;
        }
        calls.noHugePages(address, bytes);
        MemorySegment segment = MemorySegment.ofAddress(address).reinterpret(bytes, arena, s -> {
            calls.unmap(address, bytes);
            calls.close(fd);
        });
        return new Shared(segment, fd);
    }

    /**
     * A slab of {@code bytes} (a multiple of the memory tier's page size, page-aligned) that lives until
     * {@code arena} closes.
     *
     * @throws SlabMapException when the system will not map it; nothing is left allocated
     */
    static MemorySegment allocate(Arena arena, long bytes) {
        if (CALLS.isEmpty()) {
            return arena.allocate(bytes, MemoryTier.PAGE_SIZE);
        }
        Calls calls = CALLS.get();
        long address = calls.map(bytes);
        calls.noHugePages(address, bytes);
        return MemorySegment.ofAddress(address).reinterpret(bytes, arena, segment -> calls.unmap(address, bytes));
    }

    /** The libc calls, linked once. */
    private record Calls(MethodHandle mmap, MethodHandle munmap, MethodHandle madvise, MethodHandle memfdCreate,
                         MethodHandle ftruncate, MethodHandle closeFd) {
        static Optional<Calls> link() {
            if (!System.getProperty("os.name", "").startsWith("Linux")) {
                return Optional.empty();
            }
            try {
                Linker linker = Linker.nativeLinker();
                SymbolLookup libc = linker.defaultLookup();
                MethodHandle mmap = linker.downcallHandle(libc.findOrThrow("mmap"), FunctionDescriptor.of(
                        ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT,
                        ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));
                MethodHandle munmap = linker.downcallHandle(libc.findOrThrow("munmap"), FunctionDescriptor.of(
                        ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG));
                MethodHandle madvise = linker.downcallHandle(libc.findOrThrow("madvise"), FunctionDescriptor.of(
                        ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
                MethodHandle memfd = libc.find("memfd_create").map(a -> linker.downcallHandle(a,
                        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT)))
                        .orElse(null);
                MethodHandle ftruncate = linker.downcallHandle(libc.findOrThrow("ftruncate"), FunctionDescriptor.of(
                        ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));
                MethodHandle close = linker.downcallHandle(libc.findOrThrow("close"), FunctionDescriptor.of(
                        ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
                return Optional.of(new Calls(mmap, munmap, madvise, memfd, ftruncate, close));
            } catch (RuntimeException e) {
                log.warn("memory tier: cannot call mmap ({}); slabs come from zero-filled Arena allocations", e
                        .toString());
                return Optional.empty();
            }
        }

        long map(long bytes) {
            long address;
            try {
                address = (long) mmap.invokeExact(0L, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                        -1, 0L);
            } catch (Throwable t) {
                throw new SlabMapException("mmap of a " + bytes + "-byte memory-tier slab failed", t);
            }
            if (address == MAP_FAILED || address == 0) {
                throw new SlabMapException("mmap of a " + bytes + "-byte memory-tier slab failed: the system is out"
                        + " of address space or memory (check ulimit -v and vm.overcommit_memory)", null);
            }
            return address;
        }

        /** A memfd of {@code bytes} (close-on-exec), or SlabMapException; nothing is left open on failure. */
        int memfd(String name, long bytes) {
            int fd;
            try (Arena a = Arena.ofConfined()) {
                fd = (int) memfdCreate.invokeExact(a.allocateFrom(name), MFD_CLOEXEC);
            } catch (Throwable t) {
                throw new SlabMapException("memfd_create for a shared memory-tier slab failed", t);
            }
            if (fd < 0) {
                throw new SlabMapException("memfd_create for a shared memory-tier slab failed (out of file "
                        + "descriptors?)", null);
            }
            int rc;
            try {
                rc = (int) ftruncate.invokeExact(fd, bytes);
            } catch (Throwable t) {
                close(fd);
                throw new SlabMapException("ftruncate of a shared memory-tier slab failed", t);
            }
            if (rc != 0) {
                close(fd);
                throw new SlabMapException("ftruncate of a " + bytes + "-byte shared memory-tier slab failed", null);
            }
            return fd;
        }

        long mapShared(int fd, long bytes) {
            long address;
            try {
                address = (long) mmap.invokeExact(0L, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0L);
            } catch (Throwable t) {
                throw new SlabMapException("mmap of a " + bytes + "-byte shared memory-tier slab failed", t);
            }
            if (address == MAP_FAILED || address == 0) {
                throw new SlabMapException("mmap of a " + bytes + "-byte shared memory-tier slab failed: the system "
                        + "is out of address space or memory", null);
            }
            return address;
        }

        void close(int fd) {
            try {
                int rc = (int) closeFd.invokeExact(fd);
                if (rc != 0) {
                    log.error("close of a shared memory-tier slab's memfd {} failed", fd);
                }
            } catch (Throwable t) {
                log.error("close of a shared memory-tier slab's memfd {} failed", fd, t);
            }
        }

        /**
         * Keeps the slab on 4 KiB pages even where transparent huge pages are on for every mapping
         * (/sys/kernel/mm/transparent_hugepage/enabled = always): see the cost measured above. Best effort.
         */
        void noHugePages(long address, long bytes) {
            try {
                int rc = (int) madvise.invokeExact(address, bytes, MADV_NOHUGEPAGE);
                if (rc != 0) {
                    log.debug("madvise(MADV_NOHUGEPAGE) of a memory-tier slab returned {}", rc);
                }
            } catch (Throwable t) {
                log.debug("madvise(MADV_NOHUGEPAGE) failed", t);
            }
        }

        void unmap(long address, long bytes) {
            int rc;
            try {
                rc = (int) munmap.invokeExact(address, bytes);
            } catch (Throwable t) {
                throw new IllegalStateException("munmap of a " + bytes + "-byte slab failed", t);
            }
            if (rc != 0) {
                log.error("munmap of a {}-byte memory-tier slab at {} failed", bytes, Long.toHexString(address));
            }
        }
    }
}
