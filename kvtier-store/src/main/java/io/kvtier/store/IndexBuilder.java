package io.kvtier.store;

import io.kvtier.store.disk.RecordFormat;
import io.kvtier.store.disk.RecoveredRecord;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Folds the records of a start-up scan into the live index. Per key the newest value record wins unless a tombstone
 * with a higher sequence number kills it; the newest expiry record that names that value's version sets its expiry. Order in
 * the log does not matter, only sequence numbers, so any set of surviving regions yields the same answer.
 *
 * <p>Memory (issue 10): the winning version of each key goes straight into the store's index as the very
 * {@link Entry} it will keep, while the scan runs, so recovery peaks at the index's steady state plus the scan's
 * short-lived garbage, instead of holding every record in a map of its own first (which took the heap to more than
 * twice the steady state and failed with 3.7 M keys on a 1 GiB heap). Only keys with a tombstone or an expiry record
 * cost more: their newest tombstone's sequence number and their expiry records are kept to the end of the scan,
 * since a record scanned later may be older. Not thread-safe: the store's constructor owns the index meanwhile.
 */
final class IndexBuilder implements Consumer<RecoveredRecord> {
    /** An expiry record: from {@code seq} on, version {@code target} of its key expires at {@code expireAt}. */
    private record Expiry(long seq, long target, long expireAt) {
    }

    private final Map<Key, Entry> newest;
    private final Map<Key, Long> tombstones = new HashMap<>();
    private final Map<Key, List<Expiry>> expiries = new HashMap<>();
    private long maxSeq;

    /** Fills {@code index}, which nobody else may touch until {@link #build} returns. */
    IndexBuilder(Map<Key, Entry> index) {
        this.newest = index;
    }

    @Override
    public void accept(RecoveredRecord r) {
        maxSeq = Math.max(maxSeq, r.seq());
        Key key = new Key(r.key());
        switch (r.type()) {
            case RecordFormat.TYPE_VALUE -> value(key, r);
            case RecordFormat.TYPE_TOMBSTONE -> tombstone(key, r.seq());
            case RecordFormat.TYPE_EXPIRY -> expiries.computeIfAbsent(key, k -> new ArrayList<>(1))
                    .add(new Expiry(r.seq(), r.target(), r.expireAt()));
            default -> throw new IllegalStateException("record type " + r.type() + " reached the index");
        }
    }

    private void value(Key key, RecoveredRecord r) {
        Entry current = newest.get(key);
        if (current != null && current.seq >= r.seq() || r.seq() < tombstones.getOrDefault(key, -1L)) {
            return;
        }
        Entry e = new Entry(key, r.seq(), r.location().valueLength(), r.expireAt(), EntryState.DISK);
        e.disk = r.location();
        newest.put(key, e);
    }

    private void tombstone(Key key, long seq) {
        if (seq > tombstones.getOrDefault(key, -1L)) {
            tombstones.put(key, seq);
            Entry current = newest.get(key);
            if (current != null && current.seq < seq) {
                newest.remove(key);
            }
        }
    }

    long maxSeq() {
        return maxSeq;
    }

    /**
     * Completes the index: sets each entry's expiry, removes the expired ones and hands every other (state DISK) to
     * {@code sink}; returns how many were removed as expired.
     */
    long build(long now, StoreCounters counters, Consumer<Entry> sink) {
        tombstones.clear();
        long expired = 0;
        for (Iterator<Entry> it = newest.values().iterator(); it.hasNext(); ) {
            Entry e = it.next();
            applyExpiry(e, expiries.get(e.key));
            if (e.isExpired(now)) {
                it.remove();
                expired++;
                continue;
            }
            counters.created(EntryState.DISK, e.length);
            sink.accept(e);
        }
        expiries.clear();
        return expired;
    }

    private static void applyExpiry(Entry e, List<Expiry> records) {
        if (records == null) {
            return;
        }
        long newestSeq = -1;
        for (Expiry x : records) {
            if (x.target() == e.seq && x.seq() > newestSeq) {
                newestSeq = x.seq();
                e.expireAt = x.expireAt();
            }
        }
    }
}
