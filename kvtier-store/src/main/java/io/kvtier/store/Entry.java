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
    final Key key;
    final long seq;
    final int length;       // values are below 2 GiB (StoreOptions.MAX_VALUE)
    volatile long expireAt; // epoch millis, 0 = never
    /**
     * The value's cluster version (0 outside a cluster): the same on every node holding this state of the key. Set
     * when the version is created; raised (never lowered) when a primary re-stamps its write for a retry.
     */
    volatile long version;
    private static final EntryState[] STATES = EntryState.values();
    private byte state;     // an EntryState's ordinal: a byte, not a reference, keeps an entry at 64 bytes
    MemoryValue memory;     // guarded by this; the entry owns one reference
    DiskLocation disk;      // guarded by this
    private byte diskHits;  // guarded by this; decides promotion, saturates
    /** 1 while a prefetched memory copy has not been read yet (KVC.PREFETCH's used/wasted); guarded by this. */
    byte prefetched;
    /** 1 once read from memory (a hit the policy counted): DiskAdmission writes such a value under a cap. Racy, benign. */
    byte read;
    Entry timerPrev;        // guarded by the ExpiryWheel's lock; null when not scheduled
    Entry timerNext;        // guarded by the ExpiryWheel's lock; null when not scheduled

    Entry(Key key, long seq, long length, long expireAt, EntryState initial) {
        this(key, seq, length, expireAt, initial, 0);
    }

    Entry(Key key, long seq, long length, long expireAt, EntryState initial, long version) {
        this.key = key;
        this.seq = seq;
        this.length = Math.toIntExact(length);
        this.expireAt = expireAt;
        this.version = version;
        this.state = (byte) initial.ordinal();
    }

    /** Counts a disk hit and returns the hits so far (saturating); caller holds the monitor. */
    int diskHit() {
        if (diskHits < Byte.MAX_VALUE) {
            diskHits++;
        }
        return diskHits;
    }

    EntryState state() {
        return STATES[state];
    }

    /** Moves to {@code to}, checking the transition table; caller holds the monitor. */
    void moveTo(EntryState to, StoreCounters counters) {
        EntryState from = state();
        counters.moved(from, from.checkedMove(to), length);
        state = (byte) to.ordinal();
        if (prefetched != 0 && to != EntryState.MEMORY) {
            prefetched = 0; // its memory copy leaves unread
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

    @Override
    public long fingerprint() {
        return key.fingerprint;
    }
}
