package io.kvtier.store;

import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/** Live counters of the store: entries and bytes per state, and event counts. Thread-safe, lock-free. */
final class StoreCounters {
    private final AtomicLongArray entries = new AtomicLongArray(EntryState.values().length);
    private final AtomicLongArray bytes = new AtomicLongArray(EntryState.values().length);
    final LongAdder memoryHits = new LongAdder();
    final LongAdder diskHits = new LongAdder();
    final LongAdder misses = new LongAdder();
    final LongAdder demotions = new LongAdder();
    final LongAdder demotedBytes = new LongAdder();
    final LongAdder promotions = new LongAdder();
    final LongAdder prefetched = new LongAdder();     // KVC.PREFETCH: values copied from disk into memory
    final LongAdder prefetchUsed = new LongAdder();   // ...read from memory before they left it
    final LongAdder prefetchWasted = new LongAdder(); // ...left memory (demoted, deleted) unread
    final LongAdder admissionDropped = new LongAdder();      // left memory unread, not written (DiskAdmission)
    final LongAdder admissionDroppedBytes = new LongAdder();
    final LongAdder evictions = new LongAdder();
    final LongAdder evictedBytes = new LongAdder();
    final LongAdder corruptReads = new LongAdder();
    final LongAdder expired = new LongAdder();
    final LongAdder diskReadBytes = new LongAdder();

    void created(EntryState state, long length) {
        entries.incrementAndGet(state.ordinal());
        bytes.addAndGet(state.ordinal(), length);
    }

    void moved(EntryState from, EntryState to, long length) {
        entries.decrementAndGet(from.ordinal());
        bytes.addAndGet(from.ordinal(), -length);
        if (to.isLive()) {
            created(to, length);
        }
    }

    long entries(EntryState state) {
        return entries.get(state.ordinal());
    }

    long bytes(EntryState state) {
        return bytes.get(state.ordinal());
    }
}
