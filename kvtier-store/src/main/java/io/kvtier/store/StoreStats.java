package io.kvtier.store;

/**
 * A snapshot of the store's counters, per tier: bytes, entries, hits, and the moves between tiers. "Evictions" are
 * values lost: the disk tier dropped their region, or (under a disk write limit) they left memory unread and the disk
 * tier did not take them, counted also as "admission dropped" (DiskAdmission); "demotions" moved values memory -> disk;
 * "prefetched" values were copied back to memory ahead of a read (KVC.PREFETCH), and were then read ("used") or left
 * memory unread ("wasted"); "disk direct reads" are records read from disk with O_DIRECT (DiskTier#read); "disk directories" are those of
 * the disk tier (--dir and --disk-dir), the live ones those not lost while the node ran (DiskSet).
 */
public record StoreStats(
        long keys,
        long memoryBudget, long memoryUsedBytes, long memoryValueBytes, long memoryEntries,
        long diskBudget, long diskUsedBytes, long diskValueBytes, long diskEntries,
        long memoryHits, long diskHits, long misses,
        long demotions, long demotedBytes, long promotions,
        long evictions, long evictedBytes, long evictedRegions,
        long corruptReads, long expiredKeys, long diskReadBytes, long waitingBytes,
        long pinnedKeys, long pinnedBytes, long pinBudget,
        long prefetched, long prefetchUsed, long prefetchWasted, long diskDirectReads,
        int diskDirectories, int diskDirectoriesLive,
        long diskWriteLimit, long admissionDropped, long admissionDroppedBytes) {

    static StoreStats of(TieredStore s) {
        StoreCounters c = s.counters;
        return new StoreStats(s.index.size(),
                s.memory.budget(), s.memory.usedBytes(), s.memory.valueBytes(),
                c.entries(EntryState.MEMORY) + c.entries(EntryState.DEMOTING),
                s.disk.budget(), s.disk.usedBytes(), c.bytes(EntryState.DISK), c.entries(EntryState.DISK),
                c.memoryHits.sum(), c.diskHits.sum(), c.misses.sum(),
                c.demotions.sum(), c.demotedBytes.sum(), c.promotions.sum(),
                c.evictions.sum(), c.evictedBytes.sum(), s.disk.evictedRegions(),
                c.corruptReads.sum(), c.expired.sum(), c.diskReadBytes.sum(), s.waitingBytes(),
                s.pinCount(), s.pinnedBytes(), s.options.pinBytes(),
                c.prefetched.sum(), c.prefetchUsed.sum(), c.prefetchWasted.sum(), s.disk.directReadCount(),
                s.disk.directories(), s.disk.liveDirectories(),
                s.options.diskWriteLimit(), c.admissionDropped.sum(), c.admissionDroppedBytes.sum());
    }
}
