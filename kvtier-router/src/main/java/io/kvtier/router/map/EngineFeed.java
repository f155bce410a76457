package io.kvtier.router.map;

import io.kvtier.router.events.KvEvent;
import io.kvtier.router.events.KvEventBatch;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Applies one engine's KV event batches, in order, to the map. Not thread-safe: one feed per engine, fed by that
 * engine's subscriber thread.
 *
 * <p>Which blocks count. A prefix hit needs the blocks of the attention that covers the whole prompt, so, as Dynamo's
 * router does, stores are taken from full-attention (or MLA) cache groups where the event names the group's kind, else
 * from group 0 (every group, before vLLM had groups); a sliding-window group's blocks would credit prefixes the engine
 * has partly dropped. Removals follow the groups whose stores were taken. A LoRA adapter named only by its id (vLLM
 * before 0.15) keys its blocks apart from the base model's and from every adapter name, so that no lookup credits them.
 *
 * <p>Where blocks are. A block on a medium that is not the engine's own ({@code locality: REMOTE}, vLLM 0.26: a
 * connector's storage that other instances reach too) is not credited to the engine, neither stored nor removed (as
 * Dynamo does, fail-closed: the router cannot tell what it costs this engine to load it); such blocks are only counted.
 * A secondary tier's events ({@code ownership}: the tier that emitted them) are kept as a medium of their own,
 * {@code MEDIUM@ownership}, so that two tiers of one medium do not remove each other's blocks. {@code session_id} names
 * the request that stored or reused a block, not an owner (one block serves many requests): it changes nothing here.
 */
public final class EngineFeed {
    private static final Set<String> FULL_KINDS = Set.of("full_attention", "mla_attention", "sink_full_attention");

    private final KvCacheMap map;
    private final String engine;
    private final Set<Long> groups = ConcurrentHashMap.newKeySet();
    /** The seq and payload digest of the last batch (or heartbeat) applied; -1: none since the last resync. */
    private long seq = -1;
    private long digest;

    public EngineFeed(KvCacheMap map, String engine) {
        this.map = map;
        this.engine = engine;
    }

    /** Applies the batch of seq {@code seq}, whose payload had {@code digest}: the position a save records. */
    public synchronized void apply(KvEventBatch batch, long seq, long digest) {
        apply(batch);
        this.seq = seq;
        this.digest = digest;
    }

    /** A heartbeat (or any seq that changed nothing) took {@code seq}. */
    public synchronized void position(long seq, long digest) {
        this.seq = seq;
        this.digest = digest;
    }

    /** What the map held of this engine was dropped: no position until the next batch. */
    public synchronized void resync() {
        map.cleared(engine);
        groups.clear();
        seq = -1;
    }

    /** The engine's entries and the position they reflect, as one; null before any batch (nothing to resume from). */
    public synchronized MapSnapshot save() {
        return seq < 0 ? null : map.save(engine, seq, digest, groups.stream().mapToLong(Long::longValue).toArray());
    }

    /** Takes back a saved state of this engine (tracked in the map); its position is where the stream resumes. */
    public synchronized boolean restore(MapSnapshot saved) {
        if (!map.restore(saved)) {
            return false;
        }
        groups.clear();
        for (long g : saved.groups()) {
            groups.add(g);
        }
        seq = saved.seq();
        digest = saved.digest();
        return true;
    }

    public synchronized void apply(KvEventBatch batch) {
        for (KvEvent e : batch.events()) {
            switch (e) {
                case KvEvent.BlockStored s -> stored(s);
                case KvEvent.BlockRemoved r -> {
                    // Removals from the groups whose stores were taken; a group never seen stored holds nothing here
                    // (a sliding-window group 0 of a hybrid model must not evict full-attention entries).
                    if (remote(r.locality())) {
                        map.remote(engine, r.blockHashes().length);
                    } else if (r.groupIdx() == null || groups.contains(r.groupIdx())) {
                        map.removed(engine, tier(r.medium(), r.ownership()), r.blockHashes());
                    }
                }
                case KvEvent.AllBlocksCleared c -> map.cleared(engine);
            }
        }
    }

    private void stored(KvEvent.BlockStored s) {
        boolean full = s.kvCacheSpecKind() != null ? FULL_KINDS.contains(s.kvCacheSpecKind())
                : s.groupIdx() == null || s.groupIdx() == 0;
        if (!full) {
            return;
        }
        if (remote(s.locality())) {
            map.remote(engine, s.blockHashes().length);
            return;
        }
        if (s.groupIdx() != null) {
            groups.add(s.groupIdx());
        }
        String lora = s.loraName() != null ? s.loraName() : s.loraId() != null ? "\0lora-id:" + s.loraId() : null;
        map.stored(engine, tier(s.medium(), s.ownership()), s.blockHashes(), s.parentBlockHash(), s.tokenIds(),
                s.blockSize(), lora, salts(s.extraKeys(), s.loraName()));
    }

    static boolean remote(String locality) {
        return "REMOTE".equalsIgnoreCase(locality);
    }

    /** The medium a block is kept under: vLLM's medium, and the secondary tier that owns it where one does. */
    static String tier(String medium, String ownership) {
        String m = KvCacheMap.medium(medium);
        return ownership == null || ownership.isEmpty() ? m : m + "@" + ownership;
    }

    /**
     * Per block, what else the engine hashed with its tokens, as 64 bits (0: nothing but its LoRA adapter's name, which
     * the chain's root already stands for); null where no block has more. A block hashed with a multimodal input or a
     * cache salt then matches no lookup by tokens alone, as the engine would not reuse it for such a prompt either.
     */
    static long[] salts(byte[][] extraKeys, String loraName) {
        if (extraKeys == null) {
            return null;
        }
        byte[] loraOnly = loraName == null ? null : loraOnly(loraName);
        long[] salts = null;
        for (int b = 0; b < extraKeys.length; b++) {
            byte[] extra = extraKeys[b];
            if (extra != null && !java.util.Arrays.equals(extra, loraOnly) && !isEmptyArray(extra)) {
                if (salts == null) {
                    salts = new long[extraKeys.length];
                }
                salts[b] = PrefixHash.ofBytes(extra) | 1; // never 0
            }
        }
        return salts;
    }

    private static boolean isEmptyArray(byte[] raw) {
        return raw.length == 1 && raw[0] == (byte) 0x90;
    }

    private static byte[] loraOnly(String loraName) {
        try (org.msgpack.core.MessageBufferPacker p = org.msgpack.core.MessagePack.newDefaultBufferPacker()) {
            p.packArrayHeader(1);
            p.packString(loraName);
            return p.toByteArray();
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
