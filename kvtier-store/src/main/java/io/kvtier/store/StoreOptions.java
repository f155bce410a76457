package io.kvtier.store;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * How a store is laid out: data directory, memory and disk budgets, the largest value accepted, how long a writer may
 * wait for memory before its write fails, how many bytes of memory pinned keys may hold (at most half the memory
 * budget: larger values bypass memory), the heap the key index may take ({@link IndexBudget}), and more directories
 * for the disk tier, one per drive ({@code moreDiskDirs}: the disk budget is shared equally between the data
 * directory and them), and a cap on the disk tier's demotion writes in bytes per second ({@code diskWriteLimit}, 0 for
 * none: {@link DiskAdmission}), and whether the memory tier's slabs are shared memfds that clients on the same
 * host may map ({@code sharedMemory}, KVC.SHM). Validated on construction; messages name the value and limit.
 */
public record StoreOptions(Path dir, long memoryBytes, long diskBytes, long maxValueBytes, long memoryWaitMillis,
                          long pinBytes, long indexBytes, List<Path> moreDiskDirs, long diskWriteLimit,
                          boolean sharedMemory) {
    public static final long MIN_MEMORY = 1L << 20;
    public static final long MIN_DISK = 16L << 20;
    /** The least a disk directory's share may be: two regions of the smallest size. */
    public static final long MIN_DISK_PER_DIRECTORY = 2L << 20;
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
        moreDiskDirs = List.copyOf(moreDiskDirs == null ? List.of() : moreDiskDirs);
        java.util.Set<Path> seen = new java.util.HashSet<>();
        seen.add(dir.toAbsolutePath().normalize());
        for (Path p : moreDiskDirs) {
            if (!seen.add(p.toAbsolutePath().normalize())) {
                throw new IllegalArgumentException("disk directory " + p + " is given twice (the data directory "
                        + "is the first disk directory)");
            }
        }
        if (diskWriteLimit < 0) {
            throw new IllegalArgumentException("disk write limit " + diskWriteLimit + " must be 0 (none) or positive");
        }
        if (diskBytes / (1 + moreDiskDirs.size()) < MIN_DISK_PER_DIRECTORY) {
            throw new IllegalArgumentException("disk budget " + diskBytes + " over " + (1 + moreDiskDirs.size())
                    + " directories leaves each less than " + MIN_DISK_PER_DIRECTORY + " bytes");
        }
    }

    /** Options with private memory slabs. */
    public StoreOptions(Path dir, long memoryBytes, long diskBytes, long maxValueBytes, long memoryWaitMillis,
                        long pinBytes, long indexBytes, List<Path> moreDiskDirs, long diskWriteLimit) {
        this(dir, memoryBytes, diskBytes, maxValueBytes, memoryWaitMillis, pinBytes, indexBytes, moreDiskDirs,
                diskWriteLimit, false);
    }

    /** Options without a disk write limit. */
    public StoreOptions(Path dir, long memoryBytes, long diskBytes, long maxValueBytes, long memoryWaitMillis,
                        long pinBytes, long indexBytes, List<Path> moreDiskDirs) {
        this(dir, memoryBytes, diskBytes, maxValueBytes, memoryWaitMillis, pinBytes, indexBytes, moreDiskDirs, 0);
    }

    /** Options without more disk directories. */
    public StoreOptions(Path dir, long memoryBytes, long diskBytes, long maxValueBytes, long memoryWaitMillis,
                        long pinBytes, long indexBytes) {
        this(dir, memoryBytes, diskBytes, maxValueBytes, memoryWaitMillis, pinBytes, indexBytes, List.of());
    }

    /** The disk tier's directories: the data directory first, then {@link #moreDiskDirs}. */
    public List<Path> diskDirs() {
        List<Path> all = new ArrayList<>(1 + moreDiskDirs.size());
        all.add(dir);
        all.addAll(moreDiskDirs);
        return all;
    }

    /** These options with {@code dirs} as more disk directories. */
    public StoreOptions withMoreDiskDirs(List<Path> dirs) {
        return new StoreOptions(dir, memoryBytes, diskBytes, maxValueBytes, memoryWaitMillis, pinBytes, indexBytes,
                dirs, diskWriteLimit, sharedMemory);
    }

    /** These options with demotion writes capped at {@code bytesPerSecond} (0: no cap; {@link DiskAdmission}). */
    public StoreOptions withDiskWriteLimit(long bytesPerSecond) {
        return new StoreOptions(dir, memoryBytes, diskBytes, maxValueBytes, memoryWaitMillis, pinBytes, indexBytes,
                moreDiskDirs, bytesPerSecond, sharedMemory);
    }

    /** These options with the memory tier in shared memfds ({@code true}) or private memory. */
    public StoreOptions withSharedMemory(boolean shared) {
        return new StoreOptions(dir, memoryBytes, diskBytes, maxValueBytes, memoryWaitMillis, pinBytes, indexBytes,
                moreDiskDirs, diskWriteLimit, shared);
    }

    /** Options with the default index budget for these memory and disk budgets ({@link IndexBudget#defaultBytes}). */
    public StoreOptions(Path dir, long memoryBytes, long diskBytes, long maxValueBytes, long memoryWaitMillis,
                        long pinBytes) {
        this(dir, memoryBytes, diskBytes, maxValueBytes, memoryWaitMillis, pinBytes,
                IndexBudget.defaultBytes(memoryBytes, diskBytes));
    }

    /** Region files: 1/16 of a disk directory's share of the budget, between 1 MiB and 64 MiB. */
    public long regionBytes() {
        return regionBytes(diskBytes / (1 + moreDiskDirs.size()));
    }

    /** The region size for a disk budget of {@code diskBytes}: 1/16 of it, between 1 MiB and 64 MiB. */
    public static long regionBytes(long diskBytes) {
        return io.kvtier.store.disk.RegionFiles.regionBytesFor(diskBytes);
    }
}
