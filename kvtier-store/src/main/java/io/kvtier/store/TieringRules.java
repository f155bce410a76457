package io.kvtier.store;

import io.kvtier.store.memory.MemoryTier;

/**
 * The numbers the tiering engine decides by: when the demoter runs and how much it moves per batch, how many disk
 * hits promote a value, which values skip memory, how many evicted keys S3-FIFO remembers. One definition, used by
 * {@link TieredStore} and its {@code DiskWriter} and by the hit-rate simulator ({@code kvtier simulate}), so a
 * simulated budget follows the same rules as a real one. Pure functions and constants.
 */
public final class TieringRules {
    /** Evicted keys S3-FIFO's ghost queue remembers. */
    public static final int MAX_GHOSTS = 1 << 20;
    /** The disk hit that promotes a value back into memory (it keeps its disk copy). */
    public static final int PROMOTE_AFTER_DISK_HITS = 2;
    /** A demotion batch stops once it holds this many bytes of values still to write... */
    public static final long DEMOTION_BATCH_BYTES = 16L << 20;
    /** ...or this many such values. */
    public static final int DEMOTION_BATCH_ENTRIES = 1024;

    private TieringRules() {
    }

    /**
     * The demoter runs while free memory is below this: 1/8 of the budget capped at 256 MiB, or what waiting writers
     * need if more, never above the budget. Each batch aims to free up to 1.5 times it.
     */
    public static long lowWatermark(long memoryBudget, long waitingBytes) {
        long base = Math.min(memoryBudget / 8, 256L << 20);
        return Math.min(memoryBudget, Math.max(base, waitingBytes));
    }

    /** Whether a value of {@code length} bytes skips the memory tier (its pages exceed half the budget). */
    public static boolean bypassesMemory(long length, long memoryBudget) {
        return MemoryTier.footprintOf(length) > memoryBudget / 2;
    }
}
