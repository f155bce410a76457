package io.kvtier.store;

import java.nio.file.Path;

/**
 * How a store is laid out: data directory, memory and disk budgets, the largest value accepted, how long a writer may
 * wait for memory before its write fails, how many bytes of memory pinned keys may hold (at most half the memory
 * budget: larger values bypass memory), and the heap the key index may take ({@link IndexBudget}). Validated on
 * construction; messages name the value and limit.
 */
public record StoreOptions(Path dir, long memoryBytes, long diskBytes, long maxValueBytes, long memoryWaitMillis,
                          long pinBytes, long indexBytes) {
    public static final long MIN_MEMORY = 1L << 20;
    public static final long MIN_DISK = 16L << 20;
    /** Values are at most 2 GiB less room for the largest key and headers (lengths are 32-bit on disk). */
    public static final long MAX_VALUE = Integer.MAX_VALUE - 2L * 65536;

    public StoreOptions {
        if (dir == null) {
            throw new IllegalArgumentException("data directory is required");
        }
        if (memoryBytes < MIN_MEMORY) {
            throw new IllegalArgumentException("memory budget " + memoryBytes + " is below the minimum " + MIN_MEMORY);
        }
        if (diskBytes < MIN_DISK) {
            throw new IllegalArgumentException("disk budget " + diskBytes + " is below the minimum " + MIN_DISK);
        }
        if (maxValueBytes < 1 || maxValueBytes > MAX_VALUE) {
            throw new IllegalArgumentException("max value size " + maxValueBytes + " must be between 1 and "
                    + MAX_VALUE);
        }
        if (pinBytes < 0 || pinBytes > memoryBytes / 2) {
            throw new IllegalArgumentException("pin budget " + pinBytes + " must be between 0 and half the memory "
                    + "budget, " + memoryBytes / 2);
        }
        if (memoryWaitMillis < 1) {
            throw new IllegalArgumentException("memory wait " + memoryWaitMillis + " ms must be positive");
        }
        if (indexBytes < IndexBudget.MIN_BYTES) {
            throw new IllegalArgumentException("index memory " + indexBytes + " is below the minimum "
                    + IndexBudget.MIN_BYTES);
        }
    }

    /** Options with the default index budget for these memory and disk budgets ({@link IndexBudget#defaultBytes}). */
    public StoreOptions(Path dir, long memoryBytes, long diskBytes, long maxValueBytes, long memoryWaitMillis,
                        long pinBytes) {
        this(dir, memoryBytes, diskBytes, maxValueBytes, memoryWaitMillis, pinBytes,
                IndexBudget.defaultBytes(memoryBytes, diskBytes));
    }

    /** Region files: 1/16 of the disk budget, between 1 MiB and 64 MiB. */
    public long regionBytes() {
        return regionBytes(diskBytes);
    }

    /** The region size for a disk budget of {@code diskBytes}: 1/16 of it, between 1 MiB and 64 MiB. */
    public static long regionBytes(long diskBytes) {
        return Math.max(1L << 20, Math.min(64L << 20, diskBytes / 16));
    }
}
