package io.kvtier.kvcache.simulate;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * The disk tier's bookkeeping without files, following {@code DiskTier} step by step: records are appended to the
 * active region, which is sealed when the next record would overflow it (a record larger than a region fills one
 * alone); a value too large for memory gets a region of its own; when the budget needs room the oldest sealed
 * regions are evicted whole, and their residents lose their disk copy. Not thread-safe.
 */
final class RegionLogModel {
    /** A region: its size and the entries whose disk copy it holds. */
    static final class Region {
        long size;
        boolean evicted;
        final List<ChunkEntry> residents = new ArrayList<>();
    }

    private final long budget;
    private final long regionSize;
    private final Consumer<Region> onEvict;
    private final ArrayDeque<Region> sealed = new ArrayDeque<>();
    private Region active;
    private long used;
    private long evictedRegions;

    RegionLogModel(long budget, long regionSize, Consumer<Region> onEvict) {
        this.budget = budget;
        this.regionSize = regionSize;
        this.onEvict = onEvict;
    }

    long maxRecordLength() {
        return budget - regionSize;
    }

    /** Appends a record of {@code length} bytes and returns the region it went to (DiskTier.append). */
    Region append(long length) {
        if (length > maxRecordLength()) {
            throw new IllegalStateException("record of " + length + " bytes exceeds the disk tier's largest record "
                    + maxRecordLength());
        }
        if (active == null || (active.size + length > regionSize && active.size > 0)) {
            if (active != null) {
                sealed.addLast(active);
            }
            active = new Region();
        }
        makeRoom(length);
        active.size += length;
        used += length;
        return active;
    }

    /** A value written straight to disk: seals the active region, then adds a region of its own (DiskTier.adopt). */
    Region adopt(long fileSize) {
        if (active != null) {
            sealed.addLast(active);
            active = null;
        }
        makeRoom(fileSize);
        Region region = new Region();
        region.size = fileSize;
        sealed.addLast(region);
        used += fileSize;
        return region;
    }

    private void makeRoom(long length) {
        while (used + length > budget && !sealed.isEmpty()) {
            Region victim = sealed.pollFirst();
            onEvict.accept(victim);
            victim.evicted = true;
            used -= victim.size;
            evictedRegions++;
        }
        if (used + length > budget) {
            throw new IllegalStateException("no room for a record of " + length + " bytes in " + budget);
        }
    }

    long usedBytes() {
        return used;
    }

    long evictedRegions() {
        return evictedRegions;
    }
}
