package io.kvtier.store;

import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;
import java.util.function.Consumer;

/**
 * The key-to-entry map, split into {@link #BUCKETS} fixed buckets by the top bits of each key's fingerprint, so a
 * bucket is a stable unit of a keyspace walk: a key never changes bucket, whatever else is added or removed. Each
 * bucket is a ConcurrentHashMap (atomic compute per key, weakly consistent iteration); per-key heap is that of one
 * map, as before. Thread-safe.
 *
 * <p>Walking bucket b to completion returns every key present in b for the whole walk, each once: that is what a
 * stateless SCAN cursor (the next bucket number) needs.
 */
final class Index {
    static final int BUCKET_BITS = 14;
    /** Number of buckets: 16,384 (about 1 MiB of empty maps), so one bucket holds ~61 of 1 M keys. */
    static final int BUCKETS = 1 << BUCKET_BITS;

    @SuppressWarnings("unchecked")
    private final ConcurrentHashMap<Key, Entry>[] buckets = new ConcurrentHashMap[BUCKETS];

    Index() {
        for (int i = 0; i < BUCKETS; i++) {
            buckets[i] = new ConcurrentHashMap<>(2);
        }
    }

    /** The bucket of a key with fingerprint {@code fingerprint}. */
    static int bucketOf(long fingerprint) {
        return (int) (fingerprint >>> (64 - BUCKET_BITS));
    }

    private ConcurrentHashMap<Key, Entry> map(Key key) {
        return buckets[bucketOf(key.fingerprint)];
    }

    Entry get(Key key) {
        return map(key).get(key);
    }

    boolean containsKey(Key key) {
        return map(key).containsKey(key);
    }

    void put(Key key, Entry e) {
        map(key).put(key, e);
    }

    Entry compute(Key key, BiFunction<Key, Entry, Entry> f) {
        return map(key).compute(key, f);
    }

    Entry computeIfPresent(Key key, BiFunction<Key, Entry, Entry> f) {
        return map(key).computeIfPresent(key, f);
    }

    /** Removes {@code key} only if it still maps to {@code e}. */
    boolean remove(Key key, Entry e) {
        return map(key).remove(key, e);
    }

    /** Number of keys; sums the buckets (microseconds), exact when no write runs concurrently. */
    long size() {
        long n = 0;
        for (ConcurrentHashMap<Key, Entry> b : buckets) {
            n += b.mappingCount();
        }
        return n;
    }

    /** Visits every entry, bucket by bucket; weakly consistent. */
    void forEach(Consumer<Entry> visitor) {
        for (ConcurrentHashMap<Key, Entry> b : buckets) {
            b.values().forEach(visitor);
        }
    }

    /** Visits the entries of bucket {@code bucket} (0 to {@link #BUCKETS} - 1); returns how many it visited. */
    int forEachInBucket(int bucket, Consumer<Entry> visitor) {
        int n = 0;
        for (Entry e : buckets[bucket].values()) {
            visitor.accept(e);
            n++;
        }
        return n;
    }
}
