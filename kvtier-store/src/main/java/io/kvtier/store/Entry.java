package io.kvtier.store;

import io.kvtier.store.disk.DiskLocation;
import io.kvtier.store.memory.MemoryValue;
import io.kvtier.store.policy.PolicyNode;

/**
 * One version of one key. The value bytes are immutable; where they are ({@link #memory}, {@link #disk}) and the
 * {@link #state()} change under the entry's monitor, which is held only for field updates, never across I/O. An entry
 * holding both a memory copy and a disk location is "clean": demoting it only drops the memory copy.
 */
final class Entry extends PolicyNode {
    /** The key's bytes (the index holds no other copy of them, nor a {@link Key}). */
    final byte[] keyBytes;
    final long seq;
    final int length;       // values are below 2 GiB (StoreOptions.MAX_VALUE)
    volatile long expireAt; // epoch millis, 0 = never
    /**
     * The value's cluster version (0 outside a cluster): the same on every node holding this state of the key. Set
     * when the version is created; raised (never lowered) when a primary re-stamps its write for a retry.
     */
    volatile long version;
    private static final EntryState[] STATES = EntryState.values();
    private static final int STATE = 0x07;      // an EntryState's ordinal
    private static final int PREFETCHED = 0x08; // a prefetched memory copy not read yet (KVC.PREFETCH's used/wasted)
    private static final int HITS_SHIFT = 4;    // disk hits, saturating at HITS_MAX: they decide promotion
    private static final int HITS_MAX = 7;
    /**
     * State, prefetched flag and disk hits in one byte (guarded by this): bytes, not references, keep an entry at
     * 72 bytes.
     */
    private byte bits;
    MemoryValue memory;     // guarded by this; the entry owns one reference
    DiskLocation disk;      // guarded by this
    /** 1 once read from memory (a hit the policy counted): DiskAdmission writes such a value under a cap. Racy, benign. */
    byte read;
    Entry timerPrev;        // guarded by the ExpiryWheel's lock; null when not scheduled
    Entry timerNext;        // guarded by the ExpiryWheel's lock; null when not scheduled

    Entry(Key key, long seq, long length, long expireAt, EntryState initial) {
        this(key, seq, length, expireAt, initial, 0);
    }

    Entry(Key key, long seq, long length, long expireAt, EntryState initial, long version) {
        this.keyBytes = key == null ? null : key.bytes; // null: a sentinel (ExpiryWheel)
        this.seq = seq;
        this.length = Math.toIntExact(length);
        this.expireAt = expireAt;
        this.version = version;
        this.bits = (byte) initial.ordinal();
    }

    /** Counts a disk hit and returns the hits so far (saturating); caller holds the monitor. */
    int diskHit() {
        int hits = (bits >>> HITS_SHIFT) & HITS_MAX;
        if (hits < HITS_MAX) {
            hits++;
            bits = (byte) ((bits & ~(HITS_MAX << HITS_SHIFT)) | hits << HITS_SHIFT);
        }
        return hits;
    }

    EntryState state() {
        return STATES[bits & STATE];
    }

    /**
     * Whether this version's memory copy was prefetched and has not been read yet; caller holds the monitor (a racy
     * read is a hint the caller checks again under it).
     */
    boolean prefetched() {
        return (bits & PREFETCHED) != 0;
    }

    /** Sets or clears {@link #prefetched()}; caller holds the monitor. */
    void prefetched(boolean prefetched) {
        bits = (byte) (prefetched ? bits | PREFETCHED : bits & ~PREFETCHED);
    }

    /** Moves to {@code to}, checking the transition table; caller holds the monitor. */
    void moveTo(EntryState to, StoreCounters counters) {
        EntryState from = state();
        counters.moved(from, from.checkedMove(to), length);
        bits = (byte) ((bits & ~STATE) | to.ordinal());
        if (prefetched() && to != EntryState.MEMORY) {
            prefetched(false); // its memory copy leaves unread
            counters.prefetchWasted.increment();
        }
    }

    boolean isExpired(long now) {
        long e = expireAt;
        return e != 0 && e <= now;
    }

    /** {@link #isExpired} now; reads the clock only for a key that has a TTL (most have none: a read per command). */
    boolean isExpiredNow() {
        long e = expireAt;
        return e != 0 && e <= System.currentTimeMillis();
    }

    /** Whether a delete must be made durable with a tombstone: some version of these bytes is, or will be, on disk. */
    boolean mayBeOnDisk() {
        EntryState s = state();
        return disk != null || s == EntryState.DEMOTING || s == EntryState.DISK;
    }

    @Override
    public long weight() {
        return length; // constant while queued, so the policy's byte totals stay exact
    }

    /** The key's fingerprint, computed again from its bytes (an entry keeps no copy: 8 bytes a key). */
    @Override
    public long fingerprint() {
        return Key.fingerprint(keyBytes);
    }

    /** The key, as a new {@link Key} (for maps other than the index, such as pins). */
    Key key() {
        return new Key(keyBytes);
    }
}
