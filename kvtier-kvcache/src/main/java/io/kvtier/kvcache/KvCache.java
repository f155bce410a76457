package io.kvtier.kvcache;

import io.kvtier.kvcache.key.LmcacheKey;
import io.kvtier.store.KeyListener;
import io.kvtier.store.Residence;
import io.kvtier.store.TieredStore;
import io.kvtier.store.ValueRef;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Companion fate. LMCache's redis:// connector stores a chunk as two keys, K+"kv_bytes" then K+"metadata", and
 * treats the metadata key as the chunk's presence: EXISTS on it is its lookup, and a GET that finds metadata but no
 * kv_bytes is logged as an inconsistency and costs a round trip. The store evicts keys one at a time (the big
 * kv_bytes go to disk first and leave with their region), so without help the pair splits. Two rules keep it whole:
 *   1. Reads: a metadata key whose kv_bytes is absent reads as absent to every command (the server's Keyspace applies
 *      the rule for all of them), so no client ever sees a chunk whose data is gone, not even between an eviction and
 *      rule 2.
 *   2. Removal: when the store drops either half (lost to eviction or a bad checksum, or expired), the other half is
 *      deleted too, on a cleanup thread, if its partner is still absent by then and
 *      only if that other half is older than the removal (TieredStore.removeIfOlder): LMCache storing the chunk
 *      again meanwhile (kv_bytes, then metadata) must not lose its new kv_bytes to a cleanup of the old pair. A
 *      client's own DEL is left alone (DEL k.kv_bytes k.metadata must count 2); a metadata key it orphans is hidden
 *      by rule 1, and deleted once rule 1 has hidden it from a read.
 *      After a restart, metadata keys whose kv_bytes did not survive (never demoted before a kill -9) are swept.
 * Both rules need the two halves in one store, so they apply to a single node; in a cluster the halves live in
 * different slots (LMCache does not hash-tag them) and LMCache's own cleanup on a failed GET remains.
 */
/**
 * The KV-cache layer over one {@link TieredStore}: recognizes LMCache keys, keeps per-model statistics, and ties the
 * fate of a chunk's metadata and kv_bytes keys (see the essay above). Thread-safe.
 */
public final class KvCache implements KeyListener, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(KvCache.class);

    private final ConcurrentHashMap<String, ModelStats> models = new ConcurrentHashMap<>();
    private final LongAdder companionDeletes = new LongAdder();
    private final LongAdder hiddenMetadata = new LongAdder();
    private final ExecutorService cleanup = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "kvtier-kvcache-cleanup");
        t.setDaemon(true);
        return t;
    });
    private volatile TieredStore store;
    private volatile boolean companions;

    /**
     * Starts serving over {@code store} (opened with this as its listener); {@code companionFate} turns on the two
     * companion rules (single node only), and sweeps metadata keys orphaned before this start.
     */
    public void attach(TieredStore store, boolean companionFate) {
        this.store = store;
        this.companions = companionFate;
        if (companionFate) {
            later(this::sweepOrphans);
        }
    }

    // ---- KeyListener: per-model accounting and rule 2 ----

    @Override
    public void added(byte[] key, long length) {
        LmcacheKey k = LmcacheKey.parse(key);
        if (k == null) {
            return;
        }
        ModelStats m = model(k.model());
        m.keys.increment();
        m.bytes.add(length);
        if (k.holdsData()) {
            m.chunks.increment();
        }
    }

    @Override
    public void removed(byte[] key, long length, Removal why, long seq) {
        LmcacheKey k = LmcacheKey.parse(key);
        if (k == null) {
            return;
        }
        ModelStats m = model(k.model());
        m.keys.decrement();
        m.bytes.add(-length);
        if (k.holdsData()) {
            m.chunks.decrement();
            if (why == Removal.LOST) {
                m.lostChunks.increment();
            }
        }
        if (companions && (why == Removal.LOST || why == Removal.EXPIRED) && k.part() != LmcacheKey.Part.CHUNK) {
            later(() -> dropCompanion(key, seq));
        }
    }

    /** Runs {@code task} on the cleanup thread; after {@link #close()} (the store shutting down) not at all. */
    private void later(Runnable task) {
        try {
            cleanup.execute(task);
        } catch (java.util.concurrent.RejectedExecutionException closed) {
            // shutting down: the orphan sweep at the next start catches what is left
        }
    }

    /** Deletes {@code key}'s companion if {@code key} is absent and the companion was written before {@code seq}. */
    private void dropCompanion(byte[] key, long seq) {
        TieredStore s = store;
        byte[] other = LmcacheKey.companion(key);
        if (s == null || other == null || s.exists(key)) {
            return;
        }
        s.removeIfOlder(other, seq).whenComplete((r, e) -> {
            if (e != null) {
                log.warn("could not delete the companion of a removed LMCache key: {}", e.toString());
            } else if (r.existed()) {
                companionDeletes.increment();
            }
        });
    }

    private void sweepOrphans() {
        TieredStore s = store;
        long seq = s.sequence();
        List<byte[]> orphans = new ArrayList<>();
        s.forEachKey(key -> {
            LmcacheKey k = LmcacheKey.parse(key);
            if (k != null && k.part() == LmcacheKey.Part.METADATA && !s.exists(LmcacheKey.companion(key))) {
                orphans.add(key);
            }
        });
        orphans.forEach(key -> dropCompanion(LmcacheKey.companion(key), seq));
        if (!orphans.isEmpty()) {
            log.info("deleted {} LMCache metadata keys whose kv_bytes did not survive the restart", orphans.size());
        }
    }

    // ---- reads: statistics and rule 1 ----

    /** {@link TieredStore#get}, counting the read and hiding a metadata key whose kv_bytes is gone. */
    public ValueRef get(byte[] key) {
        return get(key, true);
    }

    /**
     * As {@link #get(byte[])}; with {@code touch} false (CLIENT NO-TOUCH) the read changes neither the eviction policy
     * ({@link TieredStore#get(byte[], boolean)}) nor the per-model hit statistics: it is an observer's, not an engine's.
     */
    public ValueRef get(byte[] key, boolean touch) {
        ValueRef ref = store.get(key, touch);
        LmcacheKey k = LmcacheKey.parse(key);
        if (k == null) {
            return ref;
        }
        if (ref != null && orphaned(key, k)) {
            ref.close();
            ref = null;
        }
        if (touch && k.holdsData()) {
            count(k, ref == null ? null : ref.inMemory() ? Residence.MEMORY : Residence.DISK);
        }
        return ref;
    }

    /** {@link TieredStore#exists}, counted as a probe, with rule 1. */
    public boolean exists(byte[] key) {
        LmcacheKey k = LmcacheKey.parse(key);
        return k == null ? store.exists(key) : residence(key, k) != null;
    }

    /** Where {@code key}'s value is, or null; counted as a probe, with rule 1. */
    public Residence residence(byte[] key) {
        LmcacheKey k = LmcacheKey.parse(key);
        return k == null ? store.residence(key) : residence(key, k);
    }

    private Residence residence(byte[] key, LmcacheKey k) {
        Residence r = store.residence(key);
        if (r != null && orphaned(key, k)) {
            r = null;
        }
        count(k, r);
        return r;
    }

    /**
     * Whether rule 1 hides {@code key}: a chunk's metadata key present while its kv_bytes is gone (then it is deleted
     * in the background, as after any read that hid it). Not counted in the statistics: for reads that look at a
     * key's attributes (TTL, TYPE, STRLEN ...) rather than probe or fetch a chunk.
     */
    public boolean hidden(byte[] key) {
        LmcacheKey k = LmcacheKey.parse(key);
        return k != null && store.exists(key) && orphaned(key, k);
    }

    /** How many of {@code keys}, from the first, exist: the cached prefix of a prompt in one call. */
    public int prefix(List<byte[]> keys) {
        int n = 0;
        while (n < keys.size() && exists(keys.get(n))) {
            n++;
        }
        return n;
    }

    private boolean orphaned(byte[] key, LmcacheKey k) {
        if (!companions || k.part() != LmcacheKey.Part.METADATA || store.exists(LmcacheKey.companion(key))) {
            return false;
        }
        hiddenMetadata.increment();
        long seq = store.sequence();
        byte[] kvBytes = LmcacheKey.companion(key);
        later(() -> dropCompanion(kvBytes, seq));
        return true;
    }

    private void count(LmcacheKey k, Residence r) {
        ModelStats m = model(k.model());
        if (r == null) {
            m.misses.increment();
        } else if (r == Residence.MEMORY) {
            m.memoryHits.increment();
        } else {
            m.diskHits.increment();
        }
    }

    private ModelStats model(String name) {
        return models.computeIfAbsent(name, ModelStats::new);
    }

    // ---- reporting ----

    /** Every model seen since start, by name. */
    public List<ModelSnapshot> models() {
        List<ModelSnapshot> out = new ArrayList<>();
        models.values().forEach(m -> out.add(m.snapshot()));
        out.sort(Comparator.comparing(ModelSnapshot::model));
        return out;
    }

    /** Keys deleted because their companion left (rule 2). */
    public long companionDeletes() {
        return companionDeletes.sum();
    }

    /** Reads of a metadata key answered as absent because its kv_bytes was gone (rule 1). */
    public long hiddenMetadata() {
        return hiddenMetadata.sum();
    }

    public boolean companionFate() {
        return companions;
    }

    @Override
    public void close() {
        cleanup.shutdownNow();
    }
}
