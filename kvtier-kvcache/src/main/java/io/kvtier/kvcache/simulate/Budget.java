package io.kvtier.kvcache.simulate;

import io.kvtier.store.StoreOptions;

/**
 * One point of a sweep: the memory and disk budgets of a node, as {@code --memory} and {@code --disk} would give
 * them. The memory budget follows the store's minimum; disk 0 means no disk tier at all (the real store needs at
 * least 16 MiB; the simulator treats 0 as a memory-only baseline whose victims are lost). {@code diskWriteLimit} is
 * the store's {@code --disk-write-limit} in bytes per second (0: none; {@link io.kvtier.store.DiskAdmission}).
 */
public record Budget(long memoryBytes, long diskBytes, long diskWriteLimit) {
    public Budget {
        if (diskWriteLimit < 0) {
            throw new IllegalArgumentException("--disk-write-limit " + diskWriteLimit + " must be 0 (none) or positive");
        }
        if (diskWriteLimit > 0 && diskBytes == 0) {
            throw new IllegalArgumentException("--disk-write-limit needs a disk tier: --disk 0 has none");
        }
        if (memoryBytes < StoreOptions.MIN_MEMORY) {
            throw new IllegalArgumentException("--memory " + memoryBytes + " is below the minimum "
                    + StoreOptions.MIN_MEMORY + " (1 MiB)");
        }
        if (diskBytes != 0 && diskBytes < StoreOptions.MIN_DISK) {
            throw new IllegalArgumentException("--disk " + diskBytes + " is below the minimum " + StoreOptions.MIN_DISK
                    + " (16 MiB); 0 means no disk tier");
        }
    }

    /** A budget without a disk write limit. */
    public Budget(long memoryBytes, long diskBytes) {
        this(memoryBytes, diskBytes, 0);
    }

    public boolean hasDisk() {
        return diskBytes > 0;
    }

    /** Memory plus disk: the x axis of the sweep's chart. */
    public long totalBytes() {
        return memoryBytes + diskBytes;
    }

    /** The disk tier's region size, by the store's own rule. */
    public long regionBytes() {
        return StoreOptions.regionBytes(diskBytes);
    }

    /** The largest record the disk tier takes: all but one region's worth, as in the store. */
    public long maxRecordBytes() {
        return diskBytes - regionBytes();
    }

    /** The smallest disk budget whose largest record is at least {@code recordBytes}. */
    static long minDiskFor(long recordBytes) {
        long lo = StoreOptions.MIN_DISK;
        long hi = Math.max(lo, recordBytes + (64L << 20));
        while (lo < hi) {
            long mid = lo + (hi - lo) / 2;
            if (mid - StoreOptions.regionBytes(mid) >= recordBytes) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return lo;
    }
}
