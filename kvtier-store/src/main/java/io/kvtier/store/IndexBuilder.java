package io.kvtier.store;

import io.kvtier.store.disk.RecordFormat;
import io.kvtier.store.disk.RecoveredRecord;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Folds the records of a start-up scan into the live index. Per key the newest value record wins unless a tombstone
 * with a higher sequence number kills it; the newest expiry record that names that value's version sets its expiry. Order in
 * the log does not matter, only sequence numbers, so any set of surviving regions yields the same answer.
 *
 * <p>Damage rule (see RegionScanner): a key is dropped, not served, when its newest intact record of any type is older
 * than a damaged record of that key (matched by fingerprint) or than the bound of a stretch of damage naming no key,
 * because the damaged record may be the tombstone or the newer version that the intact ones lost to.
 */
final class IndexBuilder implements Consumer<RecoveredRecord> {
    private static final class Versions {
        RecoveredRecord value;
        long tombstoneSeq = -1;
        final java.util.List<RecoveredRecord> expiries = new java.util.ArrayList<>(1);
    }

    private final Map<Key, Versions> versions = new HashMap<>();
    /** Key fingerprint -> highest sequence number of a damaged record of that key. */
    private final Map<Long, Long> damagedSeqs = new HashMap<>();
    /** Highest bound of a damaged stretch naming no key; -1 if none. */
    private long unknownDamageBound = -1;
    private long droppedForDamage;
    private long maxSeq;

    @Override
    public void accept(RecoveredRecord r) {
        if (r.type() == RecoveredRecord.DAMAGED) {
            damagedSeqs.merge(r.target(), r.seq(), Math::max);
            return;
        }
        if (r.type() == RecoveredRecord.DAMAGED_UNKNOWN) {
            unknownDamageBound = Math.max(unknownDamageBound, r.seq());
            return;
        }
        maxSeq = Math.max(maxSeq, r.seq());
        Versions v = versions.computeIfAbsent(new Key(r.key()), k -> new Versions());
        switch (r.type()) {
            case RecordFormat.TYPE_VALUE -> {
                if (v.value == null || r.seq() > v.value.seq()) {
                    v.value = r;
                }
            }
            case RecordFormat.TYPE_TOMBSTONE -> v.tombstoneSeq = Math.max(v.tombstoneSeq, r.seq());
            case RecordFormat.TYPE_EXPIRY -> v.expiries.add(r);
            default -> throw new IllegalStateException("record type " + r.type() + " reached the index");
        }
    }

    long maxSeq() {
        return maxSeq;
    }

    /** Keys the last {@link #build} dropped because a damaged record may have superseded their newest intact one. */
    long droppedForDamage() {
        return droppedForDamage;
    }

    private static long newestSeq(Versions v) {
        long newest = Math.max(v.value.seq(), v.tombstoneSeq);
        for (RecoveredRecord x : v.expiries) {
            newest = Math.max(newest, x.seq());
        }
        return newest;
    }

    private boolean olderThanDamage(Key key, long newestIntactSeq) {
        if (newestIntactSeq < unknownDamageBound) {
            return true;
        }
        Long damaged = damagedSeqs.isEmpty() ? null : damagedSeqs.get(RecordFormat.fingerprint(key.bytes));
        return damaged != null && newestIntactSeq < damaged;
    }

    /** Hands every live, unexpired entry (state DISK) to {@code sink}; returns how many were skipped as expired. */
    long build(long now, StoreCounters counters, Consumer<Entry> sink) {
        long expired = 0;
        for (Map.Entry<Key, Versions> kv : versions.entrySet()) {
            Versions v = kv.getValue();
            if (v.value == null || v.value.seq() < v.tombstoneSeq) {
                continue;
            }
            if (olderThanDamage(kv.getKey(), newestSeq(v))) {
                droppedForDamage++;
                continue;
            }
            long expireAt = v.value.expireAt();
            long newest = -1;
            for (RecoveredRecord x : v.expiries) {
                if (x.target() == v.value.seq() && x.seq() > newest) {
                    newest = x.seq();
                    expireAt = x.expireAt();
                }
            }
            if (expireAt != 0 && expireAt <= now) {
                expired++;
                continue;
            }
            Entry e = new Entry(kv.getKey(), v.value.seq(), v.value.location().valueLength(), expireAt,
                    EntryState.DISK);
            e.disk = v.value.location();
            counters.created(EntryState.DISK, e.length);
            sink.accept(e);
        }
        versions.clear();
        return expired;
    }
}
