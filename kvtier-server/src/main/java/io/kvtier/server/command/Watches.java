package io.kvtier.server.command;

import io.kvtier.server.reply.CommandException;
import io.kvtier.store.KeyListener;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * WATCH: which connections watch which keys, told by the store of every change to a key (written, overwritten,
 * deleted, expired, evicted, its TTL set or cleared), as Redis's "touched" rule: any change after WATCH fails the
 * EXEC, even one that leaves the same value. The store tells it synchronously, before the changing command's reply,
 * so a client that saw a write's reply and then runs EXEC finds the watch broken. Costs one volatile read per change
 * while nobody watches. Thread-safe.
 */
public final class Watches implements KeyListener {
    /** Most keys one connection may watch at once (Redis has no limit; this bounds the heap a client can hold). */
    static final int MAX_KEYS_PER_CONNECTION = 100_000;
    /**
     * Heap one watched key holds at most: its fingerprint in the connection's set (8 bytes) and, with its watcher, in a
     * shard of the key table (12), each table between a quarter and a half full. Charged to the connection's share of
     * the client heap budget, as Redis counts watched keys in a client's memory.
     */
    static final int HEAP_PER_KEY = 80;

    /**
     * Watched keys by fingerprint, in shards with a lock each. No object per watched key: a ByteBuffer key and a
     * concurrent set of watchers per key made eight, and with 19 connections watching 100,000 keys each G1's young
     * collections copied them for 60-80 ms every quarter second, while one ConcurrentHashMap of all watched keys
     * resized on an event loop for tens of milliseconds (issue 29: honest PINGs waited up to 460-540 ms).
     */
    private final Shard[] shards = new Shard[1 << SHARD_BITS];
    private static final int SHARD_BITS = 6;
    /** The fingerprints' seed: a client cannot choose keys whose fingerprints collide with another client's. */
    private final long seed = new java.security.SecureRandom().nextLong();
    private final AtomicInteger watching = new AtomicInteger();

    public Watches() {
        for (int i = 0; i < shards.length; i++) {
            shards[i] = new Shard();
        }
    }

    /**
     * A key's 64-bit fingerprint (FNV-1a from a per-process seed, then a murmur finalizer), never 0. Two keys with one
     * fingerprint are one key to WATCH: a change to either breaks a watch of both, a spurious EXEC failure about once
     * in 2^64 pairs, never a missed change.
     */
    long fingerprint(byte[] key) {
        long h = seed ^ key.length;
        for (byte b : key) {
            h = (h ^ (b & 0xff)) * 0x100000001b3L;
        }
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        return h == 0 ? 1 : h;
    }

    private Shard shard(long fingerprint) {
        return shards[(int) (fingerprint >>> (64 - SHARD_BITS))];
    }

    /**
     * One shard of the key table: (fingerprint, watcher) pairs in open addressing with linear probing, a key watched
     * by several connections once per connection. Guarded by its own monitor.
     */
    private static final class Shard {
        private long[] keys = new long[16];
        private Watch[] watchers = new Watch[16];
        private int size;

        synchronized void add(long fp, Watch w) {
            if (2 * (size + 1) > keys.length) {
                resize(keys.length * 2);
            }
            int mask = keys.length - 1;
            int i = (int) fp & mask;
            while (keys[i] != 0) {
                i = (i + 1) & mask;
            }
            keys[i] = fp;
            watchers[i] = w;
            size++;
        }

        /** Rehashes into {@code length} slots (a power of two, more than twice the entries). */
        private void resize(int length) {
            long[] oldKeys = keys;
            Watch[] oldWatchers = watchers;
            keys = new long[length];
            watchers = new Watch[length];
            int mask = keys.length - 1;
            for (int j = 0; j < oldKeys.length; j++) {
                if (oldKeys[j] != 0) {
                    int i = (int) oldKeys[j] & mask;
                    while (keys[i] != 0) {
                        i = (i + 1) & mask;
                    }
                    keys[i] = oldKeys[j];
                    watchers[i] = oldWatchers[j];
                }
            }
        }

        synchronized void remove(long fp, Watch w) {
            int mask = keys.length - 1;
            int i = (int) fp & mask;
            while (keys[i] != 0) {
                if (keys[i] == fp && watchers[i] == w) {
                    // Backward-shift deletion: later entries of the probe run move up into the hole, so every entry
                    // stays reachable from its home slot without a tombstone.
                    int hole = i;
                    int j = (i + 1) & mask;
                    while (keys[j] != 0) {
                        int home = (int) keys[j] & mask;
                        if (((j - home) & mask) >= ((j - hole) & mask)) {
                            keys[hole] = keys[j];
                            watchers[hole] = watchers[j];
                            hole = j;
                        }
                        j = (j + 1) & mask;
                    }
                    keys[hole] = 0;
                    watchers[hole] = null;
                    size--;
                    if (keys.length > 16 && 8 * size < keys.length) {
                        resize(keys.length / 2); // gives back what a flood of watches grew, as they are forgotten
                    }
                    return;
                }
                i = (i + 1) & mask;
            }
        }

        synchronized void touch(long fp) {
            int mask = keys.length - 1;
            int i = (int) fp & mask;
            while (keys[i] != 0) {
                if (keys[i] == fp) {
                    watchers[i].broken = true;
                }
                i = (i + 1) & mask;
            }
        }
    }

    /** One connection's watched keys (their fingerprints), and whether one of them changed since it was watched. */
    static final class Watch {
        /** Fingerprints in open addressing, 0 empty, at most half full. */
        private long[] keys = new long[16];
        private int size;
        private volatile boolean broken;
        /** Heap charged to the connection's client budget for these keys. */
        private long charged;
        /** The earliest expiry (epoch millis) among the watched keys that had a TTL when watched; MAX_VALUE if none. */
        private long earliestExpiry = Long.MAX_VALUE;

        long charged() {
            return charged;
        }

        /**
         * Whether a watched key changed since it was watched, or expired: a key with a TTL when watched whose deadline
         * has passed expired after WATCH (unless it changed first, which broke the watch anyway), as Redis's EXEC
         * checks, whether or not the store's expiry already removed it (up to half a second late).
         */
        boolean broken() {
            return broken || earliestExpiry != Long.MAX_VALUE && System.currentTimeMillis() >= earliestExpiry;
        }

        int size() {
            return size;
        }

        boolean contains(long fp) {
            int mask = keys.length - 1;
            for (int i = (int) fp & mask; keys[i] != 0; i = (i + 1) & mask) {
                if (keys[i] == fp) {
                    return true;
                }
            }
            return false;
        }

        /** Adds {@code fp}; false if it was there. */
        boolean add(long fp) {
            if (2 * (size + 1) > keys.length) {
                long[] old = keys;
                keys = new long[old.length * 2];
                size = 0;
                for (long k : old) {
                    if (k != 0) {
                        add(k);
                    }
                }
            }
            int mask = keys.length - 1;
            int i = (int) fp & mask;
            while (keys[i] != 0) {
                if (keys[i] == fp) {
                    return false;
                }
                i = (i + 1) & mask;
            }
            keys[i] = fp;
            size++;
            return true;
        }
    }

    /**
     * Adds {@code keys} to {@code w} (null: a new watch); returns the watch. {@code charge} is asked for the heap the
     * new keys will hold, before any is added; when it refuses, nothing is added and the client memory error thrown.
     * Event-loop confined per connection.
     */
    Watch watch(Watch w, byte[][] keys, java.util.function.LongPredicate charge) {
        return watch(w, keys, Long.MAX_VALUE, charge);
    }

    /**
     * As {@link #watch(Watch, byte[][], java.util.function.LongPredicate)}; {@code expiresAt}: the keys' earliest
     * expiry in epoch millis (MAX_VALUE if none has a TTL).
     */
    Watch watch(Watch w, byte[][] keys, long expiresAt, java.util.function.LongPredicate charge) {
        Watch watch = w == null ? new Watch() : w;
        long[] fps = new long[keys.length];
        int fresh = 0;
        for (byte[] k : keys) {
            long fp = fingerprint(k);
            if (!watch.contains(fp)) {
                fps[fresh++] = fp; // a key named twice in this command is told apart below
            }
        }
        long[] distinct = java.util.Arrays.copyOf(fps, fresh);
        java.util.Arrays.sort(distinct);
        int added = 0;
        for (int i = 0; i < distinct.length; i++) {
            if (i == 0 || distinct[i] != distinct[i - 1]) {
                distinct[added++] = distinct[i];
            }
        }
        if (watch.size() + added > MAX_KEYS_PER_CONNECTION) {
            throw new CommandException("ERR a connection may WATCH at most " + MAX_KEYS_PER_CONNECTION + " keys");
        }
        long bytes = (long) added * HEAP_PER_KEY;
        if (bytes > 0 && !charge.test(bytes)) {
            throw new CommandException(CLIENT_MEMORY);
        }
        watch.charged += bytes;
        watch.earliestExpiry = Math.min(watch.earliestExpiry, expiresAt);
        if (w == null) {
            watching.incrementAndGet();
        }
        for (int i = 0; i < added; i++) {
            watch.add(distinct[i]);
            shard(distinct[i]).add(distinct[i], watch);
        }
        return watch;
    }

    /** The error for a WATCH that would take the clients' heap over its budget, this connection holding the most. */
    static final String CLIENT_MEMORY = "ERR client memory limit reached: watched keys and requests in progress "
            + "would hold more heap than maxmemory-clients allows, this connection the most";

    /**
     * Forgets {@code w} (UNWATCH, EXEC, DISCARD, a closed connection). Null is allowed. A watch of more than
     * {@link Transactions#WATCH_SLICE} keys is forgotten on a pool thread (100,000 keys take milliseconds, too long
     * for an event loop): its connection has let go of it, and until then it only marks itself broken for changes
     * that nobody will ask about.
     */
    void unwatch(Watch w) {
        if (w == null) {
            return;
        }
        if (w.size() > Transactions.WATCH_SLICE) {
            java.util.concurrent.ForkJoinPool.commonPool().execute(() -> forget(w));
        } else {
            forget(w);
        }
    }

    private void forget(Watch w) {
        for (long fp : w.keys) {
            if (fp != 0) {
                shard(fp).remove(fp, w);
            }
        }
        w.keys = new long[16];
        w.size = 0;
        watching.decrementAndGet();
    }

    private void touched(byte[] key) {
        if (watching.get() == 0) {
            return;
        }
        long fp = fingerprint(key);
        shard(fp).touch(fp);
    }

    @Override
    public void added(byte[] key, long length) {
        touched(key);
    }

    @Override
    public void removed(byte[] key, long length, Removal why, long seq) {
        touched(key);
    }

    @Override
    public void changed(byte[] key) {
        touched(key);
    }
}
