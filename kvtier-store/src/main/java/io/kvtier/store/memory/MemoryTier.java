package io.kvtier.store.memory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Off-heap memory with a hard budget: slabs of up to 64 MiB owned by one shared {@link Arena}, mapped on first use
 * (the kernel fills their pages as values touch them; see {@link SlabSource}) and cut into 64 KiB pages. A value of
 * more than half a page takes whole pages (scattered, not contiguous); a smaller one
 * takes a chunk of a page of its size class (about 4 classes per power of two, so at most ~20% is lost to rounding).
 * The budget counts pages, so resident memory never exceeds it. Thread-safe: one lock guards the page and chunk
 * bookkeeping, held for O(pages of the value) work, never across I/O.
 */
public final class MemoryTier implements AutoCloseable {
    public static final int PAGE_SIZE = 64 * 1024;
    /** Values up to this size share pages; larger ones take whole pages. */
    public static final int MAX_SMALL = PAGE_SIZE / 2;
    private static final long MAX_SLAB = 64L * 1024 * 1024;
    private static final int[] CLASS_SIZES = sizeClasses();

    private final Arena arena = Arena.ofShared();
    private final ReentrantLock lock = new ReentrantLock();
    private final long budget;
    private final int totalPages;
    private final int pagesPerSlab;
    private final MemorySegment[] slabs;
    private final int[] slabFds;     // shared tiers: each slab's memfd (-1 before it is mapped); else null
    private final int[] freePages;
    private int freeCount;
    private int neverUsed;         // pages [neverUsed, totalPages) have not been handed out yet
    private volatile int pagesInUse; // written under the lock, read without it
    private long valueBytes;       // sum of live values' lengths
    private final ArrayDeque<SmallPage>[] partial;
    private volatile Runnable onFree = () -> { };
    private boolean closed;

    public MemoryTier(long budgetBytes) {
        this(budgetBytes, false);
    }

    /**
     * @param shared whether slabs are memfds that clients on the same host may map (KVC.SHM; Linux only): see
     *               {@link #slabFd}, {@link MemoryValue#extents}
     * @throws IllegalStateException if {@code shared} and this system cannot make shared slabs
     */
    @SuppressWarnings("unchecked")
    public MemoryTier(long budgetBytes, boolean shared) {
        if (shared && !SlabSource.sharesSlabs()) {
            throw new IllegalStateException("shared memory needs Linux (memfd_create) and native access "
                    + "(--enable-native-access)");
        }
        if (budgetBytes < 16L * PAGE_SIZE) {
            throw new IllegalArgumentException("memory budget " + budgetBytes + " is below the minimum " + 16 * PAGE_SIZE);
        }
        this.totalPages = Math.toIntExact(budgetBytes / PAGE_SIZE);
        this.budget = budgetOf(budgetBytes);
        this.pagesPerSlab = (int) Math.min(MAX_SLAB / PAGE_SIZE, totalPages);
        this.slabs = new MemorySegment[(totalPages + pagesPerSlab - 1) / pagesPerSlab];
        this.slabFds = shared ? new int[slabs.length] : null;
        if (shared) {
            java.util.Arrays.fill(slabFds, -1);
        }
        this.freePages = new int[totalPages];
        this.partial = new ArrayDeque[CLASS_SIZES.length];
        for (int i = 0; i < partial.length; i++) {
            partial[i] = new ArrayDeque<>();
        }
    }

    private static int[] sizeClasses() {
        java.util.List<Integer> sizes = new java.util.ArrayList<>();
        for (int s = 16; s <= 128; s += 16) {
            sizes.add(s);
        }
        for (int base = 128; base < MAX_SMALL; base *= 2) {
            for (int step = 1; step <= 4; step++) {
                sizes.add(base + base / 4 * step);
            }
        }
        return sizes.stream().mapToInt(Integer::intValue).toArray();
    }

    /** Sets what to run (outside the lock) whenever pages return to the pool; used to wake waiting writers. */
    public void onFree(Runnable listener) {
        this.onFree = listener;
    }

    /** The budget a tier asked for {@code budgetBytes} really has: whole pages, rounded down. */
    public static long budgetOf(long budgetBytes) {
        return budgetBytes / PAGE_SIZE * PAGE_SIZE;
    }

    /** The budget in bytes (rounded down to whole pages). */
    public long budget() {
        return budget;
    }

    /** Bytes of the budget in use, at page granularity. */
    public long usedBytes() {
        return (long) pagesInUse * PAGE_SIZE;
    }

    /** Sum of the lengths of the live values. */
    public long valueBytes() {
        lock.lock();
        try {
            return valueBytes;
        } finally {
            lock.unlock();
        }
    }

    /** Bytes of the budget a value of {@code length} bytes would take if it needed fresh pages. */
    public static long footprintOf(long length) {
        if (length == 0) {
            return 0;
        }
        return length <= MAX_SMALL ? PAGE_SIZE : (length + PAGE_SIZE - 1) / PAGE_SIZE * PAGE_SIZE;
    }

    /**
     * Bytes of the budget a value of {@code length} bytes holds once allocated: its share of a page of its size class
     * for a small value (small values share pages; the share includes the page's unused tail), whole pages for a large
     * one. A holder of many small values holds at most one partly used page per size class beyond this.
     */
    public static long chargeOf(long length) {
        if (length == 0) {
            return 0;
        }
        if (length > MAX_SMALL) {
            return footprintOf(length);
        }
        int perPage = PAGE_SIZE / CLASS_SIZES[classOf((int) length)];
        return (PAGE_SIZE + perPage - 1) / perPage;
    }

    /**
     * Reserves memory for a value of {@code length} bytes, or returns {@code null} when the budget has no room for it
     * now. The caller owns the returned value's first reference.
     */
    public MemoryValue allocate(long length) {
        if (length < 0 || length > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("length " + length + " is outside 0.." + Integer.MAX_VALUE);
        }
        lock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("memory tier is closed");
            }
            MemoryValue value = length == 0 ? new MemoryValue(this, 0, new int[0])
                    : length <= MAX_SMALL ? allocateSmall((int) length) : allocateLarge(length);
            if (value != null) {
                valueBytes += length;
            }
            return value;
        } finally {
            lock.unlock();
        }
    }

    private MemoryValue allocateSmall(int length) {
        int sizeClass = classOf(length);
        ArrayDeque<SmallPage> pages = partial[sizeClass];
        SmallPage page = pages.peekFirst();
        if (page == null) {
            if (freePageCount() == 0) {
                return null;
            }
            int id = takePage();
            page = new SmallPage(this, id, sizeClass, CLASS_SIZES[sizeClass], pageSegment(id));
            page.listed = true;
            pages.addFirst(page);
        }
        int chunk = page.take();
        if (page.isFull()) {
            pages.pollFirst();
            page.listed = false;
        }
        return new MemoryValue(length, page, chunk);
    }

    private MemoryValue allocateLarge(long length) {
        int n = Math.toIntExact((length + PAGE_SIZE - 1) / PAGE_SIZE);
        if (n > freePageCount()) {
            return null;
        }
        int[] ids = new int[n];
        int taken = 0;
        try {
            for (; taken < n; taken++) {
                ids[taken] = takePage();
            }
        } catch (RuntimeException e) { // a slab could not be mapped: the pages taken so far go back
            for (int i = 0; i < taken; i++) {
                givePage(ids[i]);
            }
            throw e;
        }
        return new MemoryValue(this, length, ids);
    }

    static int classOf(int length) {
        int lo = 0;
        int hi = CLASS_SIZES.length - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (CLASS_SIZES[mid] >= length) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return lo;
    }

    private int freePageCount() {
        return freeCount + (totalPages - neverUsed);
    }

    /** Takes a free page, mapping its slab first if it is the slab's first page; changes nothing if that fails. */
    private int takePage() {
        if (freeCount == 0) {
            ensureSlab(neverUsed / pagesPerSlab);
        }
        pagesInUse++;
        return freeCount > 0 ? freePages[--freeCount] : neverUsed++;
    }

    private void ensureSlab(int slab) {
        if (slabs[slab] == null) {
            long pages = Math.min(pagesPerSlab, totalPages - (long) slab * pagesPerSlab);
            if (slabFds != null) {
                SlabSource.Shared shared = SlabSource.allocateShared(arena, pages * PAGE_SIZE, "kvtier-slab-" + slab);
                slabFds[slab] = shared.fd();
                slabs[slab] = shared.segment();
            } else {
                slabs[slab] = SlabSource.allocate(arena, pages * PAGE_SIZE);
            }
        }
    }

    /** Whether slabs are shared memfds (KVC.SHM). */
    public boolean shared() {
        return slabFds != null;
    }

    /** Slabs this tier may have (mapped or not). */
    public int slabCount() {
        return slabs.length;
    }

    /** Slab {@code slab}'s memfd in this process, or -1 when it is not mapped yet or the tier is not shared. */
    public int slabFd(int slab) {
        lock.lock();
        try {
            return slabFds == null || closed ? -1 : slabFds[slab];
        } finally {
            lock.unlock();
        }
    }

    /** Bytes of slab {@code slab} (the last one may be shorter). */
    public long slabBytes(int slab) {
        return Math.min(pagesPerSlab, totalPages - (long) slab * pagesPerSlab) * PAGE_SIZE;
    }

    /** The slab holding page {@code id}, and the page's offset in it. */
    int slabOf(int id) {
        return id / pagesPerSlab;
    }

    long offsetInSlab(int id) {
        return (long) (id % pagesPerSlab) * PAGE_SIZE;
    }

    /** Page {@code id}'s bytes; the page must be in use (so its slab is mapped and published by the lock). */
    MemorySegment pageSegment(int id) {
        return slabs[id / pagesPerSlab].asSlice((long) (id % pagesPerSlab) * PAGE_SIZE, PAGE_SIZE);
    }

    void free(MemoryValue value) {
        lock.lock();
        try {
            valueBytes -= value.length();
            SmallPage small = value.smallPage();
            if (small != null) {
                freeChunk(small, value.chunk);
            } else {
                for (int id : value.pages()) {
                    givePage(id);
                }
            }
        } finally {
            lock.unlock();
        }
        onFree.run();
    }

    private void freeChunk(SmallPage page, int chunk) {
        page.give(chunk);
        ArrayDeque<SmallPage> pages = partial[page.sizeClass];
        if (page.isEmpty()) {
            if (page.listed) {
                pages.remove(page);
                page.listed = false;
            }
            givePage(page.pageId);
        } else if (!page.listed) {
            pages.addLast(page);
            page.listed = true;
        }
    }

    private void givePage(int id) {
        pagesInUse--;
        freePages[freeCount++] = id;
    }

    /** Frees every slab. Values still referenced must not be touched afterwards. */
    @Override
    public void close() {
        lock.lock();
        try {
            if (!closed) {
                closed = true;
                arena.close();
            }
        } finally {
            lock.unlock();
        }
    }
}
