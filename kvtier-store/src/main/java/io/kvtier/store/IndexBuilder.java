package io.kvtier.store;

import io.kvtier.store.disk.RecordFormat;
import io.kvtier.store.disk.RecoveredRecord;
import java.util.ArrayList;
import java.util.HashMap;
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
 *
 * <p>Damage rule (see RegionScanner): a key is dropped, not served, when its newest intact record of any type is older
 * than a damaged record of that key (matched by fingerprint) or than the bound of a stretch of damage naming no key,
 * because the damaged record may be the tombstone or the newer version that the intact ones lost to.
 */
final class IndexBuilder implements Consumer<RecoveredRecord> {
    /** An expiry record: from {@code seq} on, version {@code target} of its key expires at {@code expireAt}. */
    private record Expiry(long seq, long target, long expireAt) {
    }

    private final Index newest;
    private final Map<Key, Long> tombstones = new HashMap<>();
    private final Map<Key, List<Expiry>> expiries = new HashMap<>();
    /** Key fingerprint -> highest sequence number of a damaged record of that key. */
    private final Map<Long, Long> damagedSeqs = new HashMap<>();
    /** Per disk directory, the highest bound of a damaged stretch naming no key found there. */
    private final Map<Long, Long> unknownDamageBounds = new HashMap<>();
    private long droppedForDamage;
    private long maxSeq;
    private long maxVersion;

    /** Fills {@code index}, which nobody else may touch until {@link #build} returns. */
    IndexBuilder(Index index) {
        this.newest = index;
    }

    @Override
    public void accept(RecoveredRecord r) {
        if (r.type() == RecoveredRecord.DAMAGED) {
            damagedSeqs.merge(r.target(), r.seq(), Math::max);
            return;
        }
        if (r.type() == RecoveredRecord.DAMAGED_UNKNOWN) {
            unknownDamageBounds.merge(r.target(), r.seq(), Math::max);
            return;
        }
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
        Entry e = new Entry(key, r.seq(), r.location().valueLength(), r.expireAt(), EntryState.DISK, r.version());
        e.disk = r.location();
        maxVersion = Math.max(maxVersion, r.version());
        newest.put(key, e);
    }

    private void tombstone(Key key, long seq) {
        if (seq > tombstones.getOrDefault(key, -1L)) {
            tombstones.put(key, seq);
            Entry current = newest.get(key);
            if (current != null && current.seq < seq) {
                newest.remove(current);
            }
        }
    }

    long maxSeq() {
        return maxSeq;
    }

    /** The highest cluster version of any value record scanned (0 if none had one). */
    long maxVersion() {
        return maxVersion;
    }

    /** Keys the last {@link #build} dropped because a damaged record may have superseded their newest intact one. */
    long droppedForDamage() {
        return droppedForDamage;
    }

    private boolean olderThanDamage(Entry e, long newestIntactSeq) {
        byte[] keyBytes = e.keyBytes;
        // Damage naming no key only concerns the keys whose newest record is in the same directory: a record that
        // ends or changes a version goes where that version is (DiskSet).
        Long bound = unknownDamageBounds.isEmpty() ? null
                : unknownDamageBounds.get((long) (e.disk == null ? 0 : e.disk.region().directory()));
        if (bound != null && newestIntactSeq < bound) {
            return true;
        }
        Long damaged = damagedSeqs.isEmpty() ? null : damagedSeqs.get(RecordFormat.fingerprint(keyBytes));
        return damaged != null && newestIntactSeq < damaged;
    }

    /**
     * Completes the index: sets each entry's expiry, removes the expired ones and hands every other (state DISK) to
     * {@code sink}; returns how many were removed as expired.
     */
    long build(long now, StoreCounters counters, Consumer<Entry> sink) {
        tombstones.clear();
        long[] expired = {0};
        List<Entry> gone = new ArrayList<>();
        newest.forEach(e -> {
            List<Expiry> records = expiries.get(e.key());
            if (olderThanDamage(e, newestIntactSeq(e, records))) {
                gone.add(e);
                droppedForDamage++;
                return;
            }
            applyExpiry(e, records);
            if (e.isExpired(now)) {
                gone.add(e);
                expired[0]++;
                return;
            }
            counters.created(EntryState.DISK, e.length);
            sink.accept(e);
        });
        for (Entry e : gone) {
            newest.remove(e);
        }
        expiries.clear();
        return expired[0];
    }

    /**
     * The newest intact record of the key of {@code e}: its value record or an expiry record (a newer tombstone would
     * have removed it).
     */
    private static long newestIntactSeq(Entry e, List<Expiry> records) {
        long seq = e.seq;
        if (records != null) {
            for (Expiry x : records) {
                seq = Math.max(seq, x.seq());
            }
        }
        return seq;
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
