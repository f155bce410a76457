package io.kvtier.store.disk;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Recovery of one region. Damage stays local and never resurrects a deleted or overwritten value.
 *
 * Every record has a header checksum (fixed fields and key), a value checksum and a trailer naming its sequence
 * number and key fingerprint (RecordFormat). The scan walks the region record by record:
 *
 *  - Header intact, value checksum wrong: the record is dropped and reported as DAMAGED(key, seq); the scan goes on
 *    after it (the header's lengths are checksummed, so they can be trusted).
 *  - Header unreadable: the scan looks for the trailer that points back at this offset. Found: the damaged record's
 *    key and sequence number are known, it is reported as DAMAGED(key, seq), and the scan goes on right after the
 *    trailer. Not found: the scan resynchronizes on the next intact header, and the stretch in between is reported
 *    as DAMAGED_UNKNOWN(bound), where the bound is the "written" field of the next intact record in log order (the
 *    highest sequence number appended up to it, so at least that of every record in the stretch), or unbounded if
 *    no intact record follows in any region.
 *  - An unreadable tail of the newest region, with no trailer pointing back and no intact header after it, is a write
 *    a crash cut short (nobody was told it was written): it is truncated away. Nothing readable is ever truncated, and
 *    in an older region nothing at all is.
 *
 * The rule applied to those reports (IndexBuilder): a key is not served if its newest intact record is older than a
 * DAMAGED record of that key, or older than the bound of any DAMAGED_UNKNOWN stretch. A damaged record whose key has
 * a newer intact record changes nothing. So one flipped bit drops at most the one key it hit; only damage to both a
 * header and its trailer (two separate places) falls back to the broad rule, which drops more keys but still never
 * serves an older version or a deleted key.
 *
 * A region with any damage is renamed region-<id>.damaged.kvr (quarantined): it stays part of the log, its intact
 * records are served as usual (each carries its own checksums), and its damage is found again at every start, so the
 * keys it drops stay dropped. Eviction moves it into quarantine/ instead of deleting it.
 */
/** Reads one region front to back at start-up, reporting intact records and bounded damage; see the essay above. */
final class RegionScanner {
    private static final Logger log = LoggerFactory.getLogger(RegionScanner.class);
    private static final int CHUNK = 8 * 1024 * 1024;

    /** Running totals over all regions of one recovery, and a stretch of unknown damage awaiting its bound. */
    static final class Totals {
        long records;
        long bytes;
        long droppedRecords;
        long droppedBytes;
        int damagedRegions;
        long maxSeq;
        private boolean unknownDamageOpen;

        /** Closes a stretch of unknown damage that no intact record followed: its bound is unknown. */
        void finish(Consumer<RecoveredRecord> recovered) {
            if (unknownDamageOpen) {
                unknownDamageOpen = false;
                log.error("no intact record follows the last unreadable stretch: every key recovered is dropped");
                recovered.accept(RecoveredRecord.damagedUnknown(Long.MAX_VALUE));
            }
        }
    }

    private final Region region;
    private final Consumer<RecoveredRecord> recovered;
    private final Totals totals;
    private final boolean newest;
    private final ByteBuffer chunk = ByteBuffer.allocateDirect(CHUNK).order(ByteOrder.LITTLE_ENDIAN);
    private long fileSize;
    private boolean damaged;

    RegionScanner(Region region, Consumer<RecoveredRecord> recovered, Totals totals, boolean newest) {
        this.region = region;
        this.recovered = recovered;
        this.totals = totals;
        this.newest = newest;
    }

    void scan() throws IOException {
        fileSize = region.channel().size();
        long pos = 0;
        while (pos < fileSize) {
            long next = readRecord(pos);
            pos = next >= 0 ? next : skipDamage(pos);
        }
        region.grow(fileSize);
        if (damaged) {
            totals.damagedRegions++;
            region.markDamaged();
            log.error("region {} is damaged: quarantined under that name; its intact records are still served",
                    region);
        }
    }

    /** Reads the record at {@code pos}; returns where the next one starts, or -1 if its header is unreadable. */
    private long readRecord(long pos) throws IOException {
        RecordFormat.Header h = intactHeader(pos);
        if (h == null) {
            return -1;
        }
        byte[] key = keyOf(h);
        totals.maxSeq = Math.max(totals.maxSeq, Math.max(h.seq(), h.written()));
        if (pos + h.footprint() > fileSize) {
            if (newest) {
                return truncateTornTail(pos);
            }
            return damage(pos, fileSize, RecordFormat.fingerprint(key), h.seq(), "is cut short");
        }
        boolean valueIntact = h.footprint() <= CHUNK
                ? RecordFormat.verify(readAt(pos, (int) h.recordLength()), 0, h)
                : RecordFormat.valueIntact(region.channel(), pos, h, chunk);
        if (!valueIntact) {
            return damage(pos, pos + h.footprint(), RecordFormat.fingerprint(key), h.seq(), "fails its value checksum");
        }
        closeUnknownDamage(h.written());
        if (h.type() != RecordFormat.TYPE_PADDING) {
            DiskLocation location = new DiskLocation(region, pos, h.keyLength(), h.valueLength());
            long target = h.type() == RecordFormat.TYPE_EXPIRY && h.valueLength() == 8 && h.footprint() <= CHUNK
                    ? chunk.getLong(h.headerSize() + h.keyLength()) : 0;
            recovered.accept(new RecoveredRecord(key, h.seq(), h.expireAt(), h.type(), target, location,
                    h.version()));
            if (h.type() != RecordFormat.TYPE_SEAL) { // a seal is the log's bookkeeping, not a record of a key
                totals.records++;
            }
            totals.bytes += h.footprint();
        }
        return pos + h.footprint();
    }

    /** The header at {@code pos} if it and its key pass the header checksum (the key is left in {@link #chunk}). */
    private RecordFormat.Header intactHeader(long pos) throws IOException {
        int headerSize = region.layout().headerSize();
        if (fileSize - pos < headerSize) {
            return null;
        }
        RecordFormat.Header h = RecordFormat.Header.parse(readAt(pos, headerSize), 0, region.layout());
        if (!h.sane() || headerSize + h.keyLength() > fileSize - pos) {
            return null;
        }
        ByteBuffer headerAndKey = readAt(pos, headerSize + h.keyLength());
        return RecordFormat.headerIntact(headerAndKey, 0, h) ? h : null;
    }

    private byte[] keyOf(RecordFormat.Header h) {
        byte[] key = new byte[h.keyLength()];
        chunk.get(h.headerSize(), key);
        return key;
    }

    /**
     * The header at {@code pos} is unreadable: names the damaged record through its trailer if that survived, else
     * resynchronizes on the next intact header. Returns where the scan goes on.
     */
    private long skipDamage(long pos) throws IOException {
        long[] trailerAt = {-1};
        RecordFormat.Trailer[] found = new RecordFormat.Trailer[1];
        search(pos + region.layout().headerSize(), RecordFormat.TRAILER_MAGIC, RecordFormat.TRAILER_SIZE, t -> {
            RecordFormat.Trailer trailer = RecordFormat.Trailer.parse(readAt(t, RecordFormat.TRAILER_SIZE), 0);
            if (trailer != null && t == pos + trailer.recordLength()) {
                found[0] = trailer;
                trailerAt[0] = t;
                return true;
            }
            return false;
        });
        if (found[0] != null) {
            totals.maxSeq = Math.max(totals.maxSeq, found[0].seq());
            return damage(pos, trailerAt[0] + RecordFormat.TRAILER_SIZE, found[0].fingerprint(), found[0].seq(),
                    "has an unreadable header (its trailer names it)");
        }
        long next = search(pos + 1, region.layout().magic, region.layout().headerSize(),
                q -> intactHeader(q) != null);
        if (next < 0 && newest) {
            return truncateTornTail(pos);
        }
        long end = next < 0 ? fileSize : next;
        countDropped(pos, end);
        totals.unknownDamageOpen = true;
        log.error("region {}: bytes [{}, {}) are unreadable and name no key: every key whose newest intact record is "
                + "older than the next intact record's sequence bound is dropped", region, pos, end);
        return end;
    }

    /** Reports one damaged record of a known key occupying [{@code from}, {@code to}); returns {@code to}. */
    private long damage(long from, long to, long fingerprint, long seq, String what) {
        countDropped(from, to);
        recovered.accept(RecoveredRecord.damaged(fingerprint, seq));
        log.error("region {}: the record at offset {} ({} bytes, sequence number {}) {}: its key (fingerprint "
                + "{}) is dropped unless a newer record of it is intact", region, from, to - from, seq, what,
                Long.toHexString(fingerprint));
        return to;
    }

    private void countDropped(long from, long to) {
        damaged = true;
        totals.droppedRecords++;
        totals.droppedBytes += to - from;
    }

    private void closeUnknownDamage(long bound) {
        if (totals.unknownDamageOpen) {
            totals.unknownDamageOpen = false;
            recovered.accept(RecoveredRecord.damagedUnknown(bound));
        }
    }

    /** A write cut short by a crash at the end of the newest region: nobody was told it was written. */
    private long truncateTornTail(long pos) throws IOException {
        totals.droppedRecords++;
        totals.droppedBytes += fileSize - pos;
        log.warn("region {}: a write cut short by a crash at offset {}; truncating its last {} bytes", region, pos,
                fileSize - pos);
        region.channel().truncate(pos);
        region.channel().force(true);
        fileSize = pos;
        return pos;
    }

    /**
     * The first offset at or after {@code from} (with {@code length} bytes left in the file) where the int
     * {@code magic} starts and {@code accept} holds, or -1.
     */
    private long search(long from, int magic, int length, IoPredicate accept) throws IOException {
        ByteBuffer window = ByteBuffer.allocate(CHUNK).order(ByteOrder.LITTLE_ENDIAN);
        for (long base = from; base + length <= fileSize; base += CHUNK - length) {
            window.clear().limit((int) Math.min(CHUNK, fileSize - base));
            RecordFormat.readFully(region.channel(), window, base);
            for (int i = 0; i + length <= window.limit() && i < CHUNK - length + 1; i++) {
                if (window.getInt(i) == magic && accept.test(base + i)) {
                    return base + i;
                }
            }
        }
        return -1;
    }

    /** A predicate on a file offset that may read the file. */
    private interface IoPredicate {
        boolean test(long offset) throws IOException;
    }

    private ByteBuffer readAt(long pos, int length) throws IOException {
        chunk.clear().limit(length);
        RecordFormat.readFully(region.channel(), chunk, pos);
        return chunk.flip();
    }
}
