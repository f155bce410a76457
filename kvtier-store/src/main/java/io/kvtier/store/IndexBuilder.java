package io.kvtier.store;

import io.kvtier.store.disk.RecordFormat;
import io.kvtier.store.disk.RecoveredRecord;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Folds the records of a start-up scan into the live index. Per key the newest value record wins unless a tombstone
 * with a higher sequence number kills it; the newest expiry record newer than that value sets its expiry. Order in
 * the log does not matter, only sequence numbers, so any set of surviving regions yields the same answer.
 */
final class IndexBuilder implements Consumer<RecoveredRecord> {
    private static final class Versions {
        RecoveredRecord value;
        long tombstoneSeq = -1;
        RecoveredRecord expiry;
    }

    private final Map<Key, Versions> versions = new HashMap<>();
    private long maxSeq;

    @Override
    public void accept(RecoveredRecord r) {
        maxSeq = Math.max(maxSeq, r.seq());
        Versions v = versions.computeIfAbsent(new Key(r.key()), k -> new Versions());
        switch (r.type()) {
            case RecordFormat.TYPE_VALUE -> {
                if (v.value == null || r.seq() > v.value.seq()) {
                    v.value = r;
                }
            }
            case RecordFormat.TYPE_TOMBSTONE -> v.tombstoneSeq = Math.max(v.tombstoneSeq, r.seq());
            default -> {
                if (v.expiry == null || r.seq() > v.expiry.seq()) {
                    v.expiry = r;
                }
            }
        }
    }

    long maxSeq() {
        return maxSeq;
    }

    /** Hands every live, unexpired entry (state DISK) to {@code sink}; returns how many were skipped as expired. */
    long build(long now, StoreCounters counters, Consumer<Entry> sink) {
        long expired = 0;
        for (Map.Entry<Key, Versions> kv : versions.entrySet()) {
            Versions v = kv.getValue();
            if (v.value == null || v.value.seq() < v.tombstoneSeq) {
                continue;
            }
            long expireAt = v.value.expireAt();
            if (v.expiry != null && v.expiry.seq() > v.value.seq()) {
                expireAt = v.expiry.expireAt();
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
