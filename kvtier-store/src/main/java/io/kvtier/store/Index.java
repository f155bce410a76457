package io.kvtier.store;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.function.BiFunction;
import java.util.function.Consumer;

/**
 * The key-to-entry map, split into {@link #BUCKETS} fixed buckets by the top bits of each key's fingerprint, so a
 * bucket is a stable unit of a keyspace walk: a key never changes bucket, whatever else is added or removed.
 *
 * <p>Each bucket is an open-addressing table of two parallel arrays, a 32-bit tag of each key's fingerprint and the
 * {@link Entry} (which holds the key's bytes): no node or key object per key, so a key costs its {@code Entry}, its
 * bytes and about 13 bytes of table (ADR 0008, step 1). Linear probing; a removed key leaves a tombstone, so a slot
 * never becomes empty again in the same table and a probe can stop at the first empty slot; a table whose used slots
 * pass three quarters is rebuilt (grown, or cleaned of tombstones) into a new one, which is then published whole.
 *
 * <p>Concurrency: writers of a bucket take its monitor (the bucket's lock, as a ConcurrentHashMap's compute takes a
 * bin's); a writer stores a slot's entry before its tag, with release semantics. Readers take no lock: they read the
 * bucket's current table, and each tag and entry with acquire semantics, and trust only an entry whose key bytes
 * match. A table is never written again once a rebuild has replaced it, so a reader still in it sees the bucket as it
 * was when the reader started. {@link #compute} runs its function under the bucket's lock: the function must not
 * write to the index itself (that throws), and must not take a lock that someone holding it waits on the index with.
 *
 * <p>Walking bucket b to completion returns every key present in b for the whole walk, each once: that is what a
 * stateless SCAN cursor (the next bucket number) needs.
 */
final class Index {
    static final int BUCKET_BITS = 14;
    /** Number of buckets: 16,384, so one bucket holds ~61 of 1 M keys. */
    static final int BUCKETS = 1 << BUCKET_BITS;

    private static final int EMPTY = 0;
    private static final int TOMBSTONE = 1;
    private static final int MIN_CAPACITY = 4;
    private static final VarHandle TAG = MethodHandles.arrayElementVarHandle(int[].class);
    private static final VarHandle ENTRY = MethodHandles.arrayElementVarHandle(Entry[].class);
    private static final VarHandle TABLE = MethodHandles.arrayElementVarHandle(Table[].class);
    private static final Table NONE = new Table(0);

    /** One bucket's slots. Written only under its bucket's lock, and never after it is replaced. */
    private static final class Table {
        final int[] tags;
        final Entry[] entries;
        int used;           // slots not empty (live or tombstone); guarded by the bucket
        volatile int live;  // written under the bucket's lock; read without it by size()

        Table(int capacity) {
            tags = new int[capacity];
            entries = new Entry[capacity];
        }

        /**
         * The slot holding {@code key}, or -1 (also for {@link #NONE}: a probe of no slots); for writers, under the bucket's lock (a reader must use {@link #lookup}:
         * without the lock the slot may hold another key by the time it is read again).
         */
        int find(byte[] key, long fingerprint) {
            int n = tags.length;
            int tag = tagOf(fingerprint);
            for (int i = (int) fingerprint & (n - 1), probes = 0; probes < n; i = (i + 1) & (n - 1), probes++) {
                int t = tags[i];
                if (t == EMPTY) {
                    return -1;
                }
                if (t == tag) {
                    Entry e = entries[i];
                    if (e != null && Arrays.equals(e.keyBytes, key)) {
                        return i;
                    }
                }
            }
            return -1;
        }

        /** The entry of {@code key}, or null. Lock-free: returns the entry it compared, never one read again. */
        Entry lookup(byte[] key, long fingerprint) {
            int n = tags.length;
            int tag = tagOf(fingerprint);
            for (int i = (int) fingerprint & (n - 1), probes = 0; probes < n; i = (i + 1) & (n - 1), probes++) {
                int t = (int) TAG.getAcquire(tags, i);
                if (t == EMPTY) {
                    return null;
                }
                if (t == tag) {
                    Entry e = (Entry) ENTRY.getAcquire(entries, i);
                    if (e != null && Arrays.equals(e.keyBytes, key)) {
                        return e;
                    }
                }
            }
            return null;
        }

        Entry entry(int slot) {
            return (Entry) ENTRY.getAcquire(entries, slot);
        }
    }

    /** A bucket's writers' lock (its monitor), and where its table is. */
    private static final class Bucket {
        final int index;
        boolean inCompute; // guarded by this: a compute's function runs, so the index must not be written

        Bucket(int index) {
            this.index = index;
        }
    }

    private final Bucket[] buckets = new Bucket[BUCKETS];
    /** Each bucket's current table, read with acquire and replaced with release: a reader's first hop is here. */
    private final Table[] tables = new Table[BUCKETS];

    Index() {
        for (int i = 0; i < BUCKETS; i++) {
            buckets[i] = new Bucket(i);
            tables[i] = NONE;
        }
    }

    private Table table(int bucket) {
        return (Table) TABLE.getAcquire(tables, bucket);
    }

    private void publish(Bucket b, Table t) {
        TABLE.setRelease(tables, b.index, t);
    }

    /** The bucket of a key with fingerprint {@code fingerprint}. */
    static int bucketOf(long fingerprint) {
        return (int) (fingerprint >>> (64 - BUCKET_BITS));
    }

    /** A slot's tag: fingerprint bits the slot's position does not already share (until a table of 2^24 slots). */
    private static int tagOf(long fingerprint) {
        int t = (int) (fingerprint >>> 24);
        return (t & ~1) == 0 ? t + 2 : t; // never EMPTY or TOMBSTONE
    }

    private Bucket bucket(Key key) {
        return buckets[bucketOf(key.fingerprint)];
    }

    Entry get(Key key) {
        Table t = table(bucketOf(key.fingerprint));
        return t.lookup(key.bytes, key.fingerprint);
    }

    boolean containsKey(Key key) {
        return get(key) != null;
    }

    void put(Key key, Entry e) {
        compute(key, (k, current) -> e);
    }

    /**
     * Sets the key's entry to what {@code f} returns for the current one (null: none), atomically for the key; null
     * removes it. Returns the new entry.
     */
    Entry compute(Key key, BiFunction<Key, Entry, Entry> f) {
        Bucket b = bucket(key);
        synchronized (b) {
            Table t = writable(b);
            int slot = t.find(key.bytes, key.fingerprint);
            Entry current = slot < 0 ? null : t.entry(slot);
            Entry next = apply(b, f, key, current);
            if (next == current) {
                return next;
            }
            if (next == null) {
                removeAt(b, t, slot);
            } else if (current != null) {
                ENTRY.setRelease(t.entries, slot, next);
            } else {
                insert(b, t, key, next);
            }
            return next;
        }
    }

    /** As {@link #compute}, but only when the key has an entry; returns null (and runs nothing) when it has none. */
    Entry computeIfPresent(Key key, BiFunction<Key, Entry, Entry> f) {
        Bucket b = bucket(key);
        synchronized (b) {
            Table t = writable(b);
            int slot = t.find(key.bytes, key.fingerprint);
            if (slot < 0) {
                return null;
            }
            Entry current = t.entry(slot);
            Entry next = apply(b, f, key, current);
            if (next == null) {
                removeAt(b, t, slot);
            } else if (next != current) {
                ENTRY.setRelease(t.entries, slot, next);
            }
            return next;
        }
    }

    /** Removes the key of {@code e} only if it still maps to {@code e}. */
    boolean remove(Entry e) {
        long fingerprint = e.fingerprint();
        Bucket b = buckets[bucketOf(fingerprint)];
        synchronized (b) {
            Table t = writable(b);
            int slot = t.find(e.keyBytes, fingerprint);
            if (slot < 0 || t.entry(slot) != e) {
                return false;
            }
            removeAt(b, t, slot);
            return true;
        }
    }

    private static Entry apply(Bucket b, BiFunction<Key, Entry, Entry> f, Key key, Entry current) {
        b.inCompute = true;
        try {
            return f.apply(key, current);
        } finally {
            b.inCompute = false;
        }
    }

    /** The bucket's table, for a writer holding its lock; refuses a write from inside a compute's function. */
    private Table writable(Bucket b) {
        if (b.inCompute) {
            throw new IllegalStateException("recursive update of the key index from a compute function");
        }
        return tables[b.index]; // under the bucket's lock: the latest, written by this lock's holders only
    }

    private void removeAt(Bucket b, Table t, int slot) {
        ENTRY.setRelease(t.entries, slot, null);
        TAG.setRelease(t.tags, slot, TOMBSTONE);
        int live = t.live - 1;
        t.live = live;
        if (t.tags.length > MIN_CAPACITY && live < t.tags.length / 8) {
            publish(b, rebuilt(t, capacityFor(live)));
        }
    }

    /** Inserts a key known to be absent from {@code t}: at the first tombstone of its probe, else its empty slot. */
    private void insert(Bucket b, Table t, Key key, Entry e) {
        if ((t.used + 1) * 4L > t.tags.length * 3L) { // NONE (no slots) too
            Table bigger = rebuilt(t, capacityFor(t.live + 1));
            slotFor(bigger, key.fingerprint, e);
            publish(b, bigger); // whole; a reader still in the old table does not see e yet, as before
            return;
        }
        slotFor(t, key.fingerprint, e);
    }

    /** Puts {@code e} in the first free slot of its probe, its entry before its tag. */
    private static void slotFor(Table t, long fingerprint, Entry e) {
        int n = t.tags.length;
        for (int i = (int) fingerprint & (n - 1); ; i = (i + 1) & (n - 1)) {
            int tag = t.tags[i];
            if (tag == EMPTY || tag == TOMBSTONE) {
                if (tag == EMPTY) {
                    t.used++;
                }
                ENTRY.setRelease(t.entries, i, e);
                TAG.setRelease(t.tags, i, tagOf(fingerprint));
                t.live = t.live + 1;
                return;
            }
        }
    }

    /** A table of twice (at least) the live keys' slots: half full, no tombstones. */
    private static int capacityFor(int live) {
        return Math.max(MIN_CAPACITY, Integer.highestOneBit(Math.max(1, live) * 2 - 1) << 1);
    }

    /** A new table of {@code capacity} slots holding {@code t}'s live entries; not yet published. */
    private static Table rebuilt(Table t, int capacity) {
        Table n = new Table(capacity);
        for (int i = 0; i < t.entries.length; i++) {
            Entry e = t.entries[i];
            if (e != null) {
                slotFor(n, e.fingerprint(), e);
            }
        }
        return n;
    }

    /** Number of keys; sums the buckets (microseconds), exact when no write runs concurrently. */
    long size() {
        long n = 0;
        for (int i = 0; i < BUCKETS; i++) {
            n += table(i).live;
        }
        return n;
    }

    /** Visits every entry, bucket by bucket; weakly consistent. */
    void forEach(Consumer<Entry> visitor) {
        for (int i = 0; i < BUCKETS; i++) {
            forEachInBucket(i, visitor);
        }
    }

    /** Visits the entries of bucket {@code bucket} (0 to {@link #BUCKETS} - 1); returns how many it visited. */
    int forEachInBucket(int bucket, Consumer<Entry> visitor) {
        Table t = table(bucket);
        int n = 0;
        for (int i = 0; i < t.entries.length; i++) {
            Entry e = t.entry(i);
            if (e != null) {
                visitor.accept(e);
                n++;
            }
        }
        return n;
    }
}
