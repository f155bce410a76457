package io.kvtier.router.map;

import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;
import it.unimi.dsi.fastutil.longs.Long2LongMap;
import it.unimi.dsi.fastutil.longs.Long2LongOpenHashMap;

/**
 * The blocks one engine holds on one medium: each engine block hash with the map's prefix hash of that block, and
 * how many held blocks have each prefix hash (two engine blocks can share one: an engine hashes extra keys the map
 * does not). Primitive open-addressing tables: 12 to 16 bytes a slot, at most 3/4 full. Not thread-safe; guarded by
 * its engine's lock.
 */
final class HeldBlocks {
    private final Long2LongOpenHashMap prefixOf = new Long2LongOpenHashMap();
    private final Long2IntOpenHashMap holders = new Long2IntOpenHashMap();

    boolean holds(long prefixHash) {
        return holders.containsKey(prefixHash);
    }

    boolean knows(long engineHash) {
        return prefixOf.containsKey(engineHash);
    }

    /** The prefix hash of the engine's block {@code engineHash}; only where {@link #knows} it. */
    long prefixOf(long engineHash) {
        return prefixOf.get(engineHash);
    }

    /** Records the engine's block; one it already holds under another prefix hash is moved to this one. */
    void add(long engineHash, long prefixHash) {
        if (prefixOf.containsKey(engineHash)) {
            if (prefixOf.get(engineHash) == prefixHash) {
                return;
            }
            remove(engineHash);
        }
        prefixOf.put(engineHash, prefixHash);
        holders.addTo(prefixHash, 1);
    }

    /** Forgets the engine's block; false if it was not held (removed before, or stored before the map listened). */
    boolean remove(long engineHash) {
        if (!prefixOf.containsKey(engineHash)) {
            return false;
        }
        long prefixHash = prefixOf.remove(engineHash);
        if (holders.addTo(prefixHash, -1) <= 1) {
            holders.remove(prefixHash);
        }
        return true;
    }

    /** Every block as (engine hash, prefix hash) pairs, interleaved. */
    long[] pairs() {
        long[] out = new long[2 * prefixOf.size()];
        int i = 0;
        for (Long2LongMap.Entry e : prefixOf.long2LongEntrySet()) {
            out[i++] = e.getLongKey();
            out[i++] = e.getLongValue();
        }
        return out;
    }

    int size() {
        return prefixOf.size();
    }

    void clear() {
        prefixOf.clear();
        holders.clear();
        prefixOf.trim();
        holders.trim();
    }
}
