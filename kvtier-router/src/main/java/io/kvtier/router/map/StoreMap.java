package io.kvtier.router.map;

import io.kvtier.events.StoreEvent;
import io.kvtier.events.StoreEventBatch;
import io.kvtier.kvcache.key.LmcacheKey;
import it.unimi.dsi.fastutil.longs.Long2LongOpenHashMap;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which kvtier node holds which LMCache chunk, in which tier: the nodes' store events applied in order, looked up by
 * the chunk keys LMCache computes for a prompt ({@link io.kvtier.kvcache.key.LmcacheChunkKeys}).
 *
 * <p>Only LMCache keys are kept (other keys in the store are ignored): a chunk's {@code kv_bytes} key, or a whole-chunk
 * key (no suffix), under a 64-bit hash of its key without the suffix; its {@code metadata} half is not kept (LMCache
 * reads a chunk only when both are there, and kvtier deletes the metadata when the kv_bytes goes). Per chunk: 8 bytes of
 * key hash and 8 of length and tier in an open-addressing table, about 32 bytes per chunk at its load factor.
 * Thread-safe: each node's events come from one thread, lookups from any.
 */
public final class StoreMap {
    private static final long DISK_BIT = 1L << 62;

    private final Map<String, NodeChunks> nodes = new ConcurrentHashMap<>();

    /** Starts tracking {@code node} (its {@code --kvtier} name), forgetting what was known of it. */
    public void addNode(String node) {
        nodes.put(node, new NodeChunks());
    }

    public void removeNode(String node) {
        nodes.remove(node);
    }

    /** Applies a batch of {@code node}'s events; a batch of a new incarnation of the node is refused (resync). */
    public void apply(String node, StoreEventBatch batch) {
        NodeChunks n = nodes.get(node);
        if (n == null) {
            return;
        }
        synchronized (n) {
            if (n.incarnation != 0 && n.incarnation != batch.incarnation()) {
                throw new IllegalStateException("node " + node + " restarted (incarnation " + n.incarnation + " -> "
                        + batch.incarnation() + ")");
            }
            n.incarnation = batch.incarnation();
            n.events += batch.events().size();
            n.lagSeconds = Math.max(0, System.currentTimeMillis() / 1000.0 - batch.ts());
            for (StoreEvent e : batch.events()) {
                long key = chunkKey(e.key());
                if (key == 0) {
                    continue;
                }
                if (e.isRemoval()) {
                    n.chunks.remove(key);
                } else {
                    n.chunks.put(key, e.length() | (e.tier() == StoreEvent.Tier.DISK ? DISK_BIT : 0));
                    n.remember(e.key(), e.tier());
                }
            }
        }
    }

    /** What is known of {@code node} can no longer be trusted (a loss; a snapshot follows): dropped. */
    public void cleared(String node) {
        NodeChunks n = nodes.get(node);
        if (n != null) {
            synchronized (n) {
                n.chunks.clear();
                n.chunks.trim();
                n.incarnation = 0;
            }
        }
    }

    /**
     * Where each of {@code chunkKeys} (a prompt's chunks in order, without a redis:// suffix) is, chunk by chunk, up to
     * the first held by no node.
     */
    public List<Held> lookup(List<String> chunkKeys) {
        List<Held> out = new ArrayList<>();
        for (String k : chunkKeys) {
            byte[] b = k.getBytes(StandardCharsets.UTF_8);
            long key = hash(b, b.length);
            Held best = null;
            for (Map.Entry<String, NodeChunks> e : nodes.entrySet()) {
                NodeChunks n = e.getValue();
                long v;
                synchronized (n) {
                    v = n.chunks.getOrDefault(key, -1L);
                }
                if (v >= 0) {
                    boolean disk = (v & DISK_BIT) != 0;
                    Held h = new Held(e.getKey(), disk ? StoreEvent.Tier.DISK : StoreEvent.Tier.MEMORY,
                            v & ~DISK_BIT);
                    if (best == null || best.tier() == StoreEvent.Tier.DISK && !disk) {
                        best = h; // a replica in memory beats one on disk
                    }
                }
            }
            if (best == null) {
                break;
            }
            out.add(best);
        }
        return out;
    }

    /**
     * A key {@code node} holds a chunk's data under, in {@code tier} now, among the last few stored or moved there, other
     * than {@code not} (the key probed last: samples spread over chunks); null if none. What fetch
     * probes read ({@code FetchProbes}).
     */
    public byte[] recentKey(String node, StoreEvent.Tier tier, byte[] not) {
        NodeChunks n = nodes.get(node);
        if (n == null) {
            return null;
        }
        synchronized (n) {
            byte[][] ring = n.recent[tier.ordinal()];
            for (int i = 0; i < RECENT; i++) {
                byte[] k = ring[Math.floorMod(n.cursor[tier.ordinal()] - 1 - i, RECENT)];
                if (k == null || java.util.Arrays.equals(k, not)) {
                    continue;
                }
                long v = n.chunks.get(chunkKey(k));
                if (v >= 0 && ((v & DISK_BIT) != 0) == (tier == StoreEvent.Tier.DISK)) {
                    return k;
                }
            }
            return null;
        }
    }

    /** One chunk found: on {@code node}, in {@code tier}, its kv_bytes {@code bytes} long. */
    public record Held(String node, StoreEvent.Tier tier, long bytes) {
    }

    /** Per node: chunks known, in memory and on disk, events applied, age of the last batch. */
    public record NodeStats(String node, long memoryChunks, long diskChunks, long events, double lagSeconds) {
    }

    public List<NodeStats> stats() {
        List<NodeStats> out = new ArrayList<>();
        nodes.forEach((name, n) -> {
            synchronized (n) {
                long disk = n.chunks.values().longStream().filter(v -> (v & DISK_BIT) != 0).count();
                out.add(new NodeStats(name, n.chunks.size() - disk, disk, n.events, n.lagSeconds));
            }
        });
        out.sort(java.util.Comparator.comparing(NodeStats::node));
        return out;
    }

    /** The map key of a store key: its hash without the kv_bytes suffix; 0 for a metadata half or no LMCache key. */
    static long chunkKey(byte[] key) {
        LmcacheKey k = LmcacheKey.parse(key);
        if (k == null || !k.holdsData()) {
            return 0;
        }
        return hash(key, k.part() == LmcacheKey.Part.KV_BYTES ? key.length - "kv_bytes".length() : key.length);
    }

    /** FNV-1a over the first {@code n} bytes, then a 64-bit finalizer; never 0. */
    static long hash(byte[] b, int n) {
        long h = 0xcbf29ce484222325L;
        for (int i = 0; i < n; i++) {
            h = (h ^ (b[i] & 0xff)) * 0x100000001b3L;
        }
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return h == 0 ? 1 : h;
    }

    /** Keys remembered per node and tier for fetch probes. */
    static final int RECENT = 8;

    private static final class NodeChunks {
        final Long2LongOpenHashMap chunks = new Long2LongOpenHashMap();
        /** The last {@link #RECENT} keys stored or moved into each tier (by StoreEvent.Tier ordinal), a ring each. */
        final byte[][][] recent = new byte[StoreEvent.Tier.values().length][RECENT][];
        final int[] cursor = new int[StoreEvent.Tier.values().length];
        long incarnation;
        long events;
        double lagSeconds;

        NodeChunks() {
            chunks.defaultReturnValue(-1);
        }

        void remember(byte[] key, StoreEvent.Tier tier) {
            int t = tier.ordinal();
            recent[t][cursor[t]] = key;
            cursor[t] = (cursor[t] + 1) % RECENT;
        }
    }
}
