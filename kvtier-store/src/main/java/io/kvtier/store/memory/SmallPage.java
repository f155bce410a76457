package io.kvtier.store.memory;

import java.lang.foreign.MemorySegment;

/** A page cut into equal chunks of one size class, with a bitmap of the chunks in use; guarded by the tier's lock. */
final class SmallPage {
    final MemoryTier tier; // the tier the page belongs to: its values keep no reference of their own
    final int pageId;
    final int sizeClass;
    final int chunkSize;
    final int chunks;
    final MemorySegment segment;
    private final long[] used;
    private int inUse;
    boolean listed; // whether it sits in its class's list of pages with free chunks

    SmallPage(MemoryTier tier, int pageId, int sizeClass, int chunkSize, MemorySegment segment) {
        this.tier = tier;
        this.pageId = pageId;
        this.sizeClass = sizeClass;
        this.chunkSize = chunkSize;
        this.chunks = MemoryTier.PAGE_SIZE / chunkSize;
        this.segment = segment;
        this.used = new long[(chunks + 63) / 64];
    }

    boolean isFull() {
        return inUse == chunks;
    }

    boolean isEmpty() {
        return inUse == 0;
    }

    /** Marks a free chunk used and returns its index; the page must not be full. */
    int take() {
        for (int w = 0; w < used.length; w++) {
            long free = ~used[w];
            if (free != 0) {
                int bit = Long.numberOfTrailingZeros(free);
                int chunk = w * 64 + bit;
                if (chunk < chunks) {
                    used[w] |= 1L << bit;
                    inUse++;
                    return chunk;
                }
            }
        }
        throw new IllegalStateException("take from a full page");
    }

    void give(int chunk) {
        long mask = 1L << (chunk & 63);
        if ((used[chunk >>> 6] & mask) == 0) {
            throw new IllegalStateException("double free of chunk " + chunk + " in page " + pageId);
        }
        used[chunk >>> 6] &= ~mask;
        inUse--;
    }
}
