package io.kvtier.kvcache.simulate;

import io.kvtier.store.DiskAdmission;
import io.kvtier.store.TieringRules;
import io.kvtier.store.disk.DirectWrite;
import io.kvtier.store.disk.RecordFormat;
import io.kvtier.store.memory.MemoryTier;
import io.kvtier.store.policy.PolicyNode;
import java.util.ArrayList;
import java.util.List;

/*
 * What TieredStore does with a key, without bytes, threads or files.
 *
 * Real: the memory tier's eviction order is the store's own policy class (KvCachePolicy unless a Policy says
 * otherwise; each chunk linked to the one before it in its prompt), fed ChunkEntry nodes weighted by value
 * length as the store's entries are; memory is counted in the tier's pages (MemoryTier.footprintOf, budgetOf); the
 * demotion loop, its watermark and batch limits, the memory bypass and the promotion rule come from TieringRules,
 * the region size from StoreOptions. Modeled, step by step after the code: DiskWriter's demotion batches (clean
 * victims only drop their memory copy, dirty ones are appended; a record whose region a later record of the batch
 * evicted stays in memory), DiskTier's region log (RegionLogModel), DiskWriter.onRegionEvicted and
 * TieredStore.maybePromote (a disk hit promotes on the second hit if memory has room now, keeping the disk copy).
 * Under a disk write limit the store's own DiskAdmission decides which dirty victims are written, on the trace's
 * clock (each request's arrival time).
 *
 * Simplified: the demoter thread runs to completion right after each write or promotion that leaves free memory
 * under the watermark, where the real one runs concurrently (so a real burst of writes can briefly wait for memory;
 * here it never does); a writer that finds memory full waits for the demoter exactly as the real MemoryWaiters
 * arrange, but without time. Keys are not written (no tombstones: LMCache never overwrites or deletes a chunk),
 * records carry a fixed key length, and LMCache's small metadata companion values are left out.
 * Disk budget 0 (no disk tier, which the real store does not allow) drops memory victims, counted as evicted.
 */
/** The store's tiering decisions on imaginary values; see the essay above. Not thread-safe. */
final class TierModel {
    /** Bytes of an LMCache key such as {@code vllm@meta-llama/Llama-3.1-8B-Instruct@1@0@<64 hex>@bfloat16}. */
    static final int KEY_BYTES = 96;

    private final long memoryBudget;
    private final io.kvtier.store.policy.TierPolicy policy;
    private final RegionLogModel disk;             // null: no disk tier
    private final ChunkIndex index = new ChunkIndex();
    private final DiskAdmission admission;
    private long nowNanos;
    private long memoryUsed;
    final TierCounters counters = new TierCounters();

    /** What a lookup found. */
    enum Hit { MISS, MEMORY, DISK }

    TierModel(Budget budget) {
        this(budget, Policy.KVTIER);
    }

    TierModel(Budget budget, Policy kind) {
        this.memoryBudget = MemoryTier.budgetOf(budget.memoryBytes());
        this.policy = kind.create(memoryBudget);
        this.disk = budget.hasDisk() ? new RegionLogModel(budget.diskBytes(), budget.regionBytes(), this::evicted)
                : null;
        this.admission = new DiskAdmission(budget.diskWriteLimit());
    }

    /** The trace's clock, for the disk write limit's bucket: the request about to be served arrives now. */
    void clock(double seconds) {
        nowNanos = (long) (seconds * 1e9);
    }

    /** Whether the store would accept a value of {@code length} bytes, or why not. */
    static String refusal(Budget budget, long length) {
        boolean bypass = TieringRules.bypassesMemory(length, MemoryTier.budgetOf(budget.memoryBytes()));
        long record = bypass ? DirectWrite.VALUE_OFFSET + length + RecordFormat.TRAILER_SIZE
                : RecordFormat.footprint(KEY_BYTES, length);
        if (bypass && !budget.hasDisk()) {
            return "--memory " + budget.memoryBytes() + " is too small for a chunk of " + length + " bytes (a value "
                    + "over half the memory budget goes straight to disk) and --disk is 0";
        }
        if (budget.hasDisk() && record > budget.maxRecordBytes()) {
            return "--disk " + budget.diskBytes() + " cannot hold a chunk of " + length + " bytes: the disk tier "
                    + "keeps one region free, so it needs at least " + Budget.minDiskFor(record) + " bytes";
        }
        return null;
    }

    boolean contains(long key) {
        return index.get(key) != null;
    }

    /**
     * GET: a memory hit counts an access (S3-FIFO; LRU moves the entry); a disk hit may promote (TieredStore.get,
     * readFromDisk).
     */
    Hit get(long key) {
        return get(key, null);
    }

    /** GET of {@code key}, read right after {@code parentKey} in one prompt's lookup (null: its first chunk). */
    Hit get(long key, Long parentKey) {
        ChunkEntry e = index.get(key);
        if (e == null) {
            return Hit.MISS;
        }
        if (parentKey != null && e.parent == null) {
            e.parent = index.get(parentKey);
        }
        if (e.inMemory) {
            e.read = true;
            policy.touch(e);
            counters.memoryReadBytes += e.length;
            return Hit.MEMORY;
        }
        counters.diskReadBytes += e.length;
        maybePromote(e);
        return Hit.DISK;
    }

    /** SET of a key not present. */
    void put(long key, long length) {
        put(key, length, null);
    }

    /** SET of a key not present, which follows {@code parentKey} in its prompt (null: the first chunk). */
    void put(long key, long length, Long parentKey) {
        ChunkEntry e = new ChunkEntry(key, length);
        e.parent = parentKey == null ? null : index.get(parentKey);
        index.add(e);
        counters.writtenBytes += length;
        if (TieringRules.bypassesMemory(length, memoryBudget)) {
            e.region = disk.adopt(DirectWrite.VALUE_OFFSET + length + RecordFormat.TRAILER_SIZE);
            e.region.residents.add(e);
            counters.diskWrittenBytes += length;
            return;
        }
        long footprint = MemoryTier.footprintOf(length);
        if (free() < footprint) {
            demote(footprint); // the writer waits; its bytes raise the watermark (MemoryWaiters)
        }
        toMemory(e);
        demote(0);
    }

    private void maybePromote(ChunkEntry e) {
        if (TieringRules.bypassesMemory(e.length, memoryBudget)
                || ++e.diskHits < TieringRules.PROMOTE_AFTER_DISK_HITS
                || free() < MemoryTier.footprintOf(e.length)) {
            return;
        }
        toMemory(e);
        counters.promotions++;
        demote(0);
    }

    private void toMemory(ChunkEntry e) {
        e.inMemory = true;
        memoryUsed += MemoryTier.footprintOf(e.length);
        policy.add(e);
    }

    private long free() {
        return memoryBudget - memoryUsed;
    }

    /** DiskWriter.run's loop: batches while free memory is under the watermark. */
    private void demote(long waitingBytes) {
        while (free() < TieringRules.lowWatermark(memoryBudget, waitingBytes)
                && demoteBatch(TieringRules.lowWatermark(memoryBudget, waitingBytes) * 3 / 2 - free()) > 0) {
            // each batch moved something; go on until the watermark is met
        }
    }

    /** DiskWriter.demoteBatch: victims until about {@code wanted} bytes are freed or the batch is full. */
    private int demoteBatch(long wanted) {
        List<ChunkEntry> dirty = new ArrayList<>();
        long bytes = 0;
        long freed = 0;
        int moved = 0;
        while (freed < wanted && bytes < TieringRules.DEMOTION_BATCH_BYTES
                && dirty.size() < TieringRules.DEMOTION_BATCH_ENTRIES) {
            PolicyNode node = policy.nextVictim();
            if (node == null) {
                break;
            }
            ChunkEntry e = (ChunkEntry) node;
            freed += MemoryTier.footprintOf(e.length);
            if (e.region != null) {
                leaveMemory(e);
                moved++;
            } else if (disk != null && !admission.admits(e.fingerprint(), e.length, e.read, nowNanos)) {
                leaveMemory(e); // DiskWriter.demoteBatch: refused by the write limit, lost
                lose(e);
                counters.admissionDroppedBytes += e.length;
                moved++;
            } else {
                dirty.add(e);
                bytes += e.length;
            }
        }
        return moved + (disk == null ? drop(dirty) : writeDemoted(dirty));
    }

    private int writeDemoted(List<ChunkEntry> dirty) {
        RegionLogModel.Region[] regions = new RegionLogModel.Region[dirty.size()];
        for (int i = 0; i < regions.length; i++) {
            regions[i] = disk.append(RecordFormat.footprint(KEY_BYTES, dirty.get(i).length));
        }
        int moved = 0;
        for (int i = 0; i < regions.length; i++) {
            ChunkEntry e = dirty.get(i);
            if (regions[i].evicted) {
                policy.add(e); // bounced: stays in memory
                continue;
            }
            e.region = regions[i];
            regions[i].residents.add(e);
            leaveMemory(e);
            counters.diskWrittenBytes += e.length;
            moved++;
        }
        return moved;
    }

    /** No disk tier: a victim is lost at once. */
    private int drop(List<ChunkEntry> dirty) {
        for (ChunkEntry e : dirty) {
            leaveMemory(e);
            lose(e);
        }
        return dirty.size();
    }

    private void leaveMemory(ChunkEntry e) {
        e.inMemory = false;
        memoryUsed -= MemoryTier.footprintOf(e.length);
    }

    /** DiskWriter.onRegionEvicted: residents lose their disk copy; those with no memory copy are gone. */
    private void evicted(RegionLogModel.Region region) {
        for (ChunkEntry e : region.residents) {
            if (e.region != region) {
                continue;
            }
            e.region = null;
            if (!e.inMemory) {
                lose(e);
            }
        }
        region.residents.clear();
    }

    private void lose(ChunkEntry e) {
        index.remove(e.key);
        counters.evictions++;
        counters.evictedBytes += e.length;
    }

    long memoryUsedBytes() {
        return memoryUsed;
    }

    long diskUsedBytes() {
        return disk == null ? 0 : disk.usedBytes();
    }

    long evictedRegions() {
        return disk == null ? 0 : disk.evictedRegions();
    }

    int keys() {
        return index.size();
    }

    /** Where {@code key} is now, for tests: MISS, MEMORY (perhaps also on disk) or DISK. */
    Hit where(long key) {
        ChunkEntry e = index.get(key);
        return e == null ? Hit.MISS : e.inMemory ? Hit.MEMORY : Hit.DISK;
    }

    /** Whether {@code key} is in memory with a disk copy too (promoted, or demoted once already). */
    boolean isClean(long key) {
        ChunkEntry e = index.get(key);
        return e != null && e.inMemory && e.region != null;
    }
}
