package io.kvtier.store.disk;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/*
 * Why: a region cut short exactly at a record boundary, or a region file removed, looks like nothing at all to a
 * scan: no checksum fails. If it held a tombstone (or the newest version of a key), recovery served the deleted (or
 * older) value again, and said nothing. Sequence numbers cannot show the hole: they are global, and other regions'
 * records fill the range.
 *
 * So each region of the log (not a direct write's) begins with a seal record (RecordFormat.TYPE_SEAL) summarizing the
 * region written before it: that region's id and final length, the (key fingerprint, sequence number) of every record
 * it holds, and the same, with their region ids, of the direct writes adopted while it was the active one. At start,
 * a predecessor that is missing, shorter than its summary says, or damaged has its summary applied: each listed
 * record is reported as a damaged record of that fingerprint (RegionScanner's rule: a key whose newest intact record
 * is older than a damaged one of it is not served). A listed record that survived changes nothing; one that did not
 * drops exactly its key, whether it was lost to damage or evicted on purpose (its key left the index then too). A
 * damaged stretch inside a summarized region is then known record by record, so it drops only the keys it held
 * instead of falling back to the broad rule. A graceful stop writes one more region holding only a seal, so that the
 * last region written is summarized too; after a crash, the newest region's tail is the crash's to lose.
 *
 * The summary costs 16 bytes per record (24 per direct write) once, in the next region, and as much heap for the
 * region being written. Start-up reads each seal's head and direct writes; the record list only of a region found
 * short, missing or damaged.
 */

/** The summary of one region of the log, written as the seal record that begins the next one; see above. */
final class RegionSummary {
    static final int VERSION = 1;
    /** version, previous id, previous length, direct count, record count. */
    static final int HEAD = 4 + 8 + 8 + 4 + 4;

    /** The region summarized, or -1 for none (the first region of an empty log). */
    private long regionId = -1;
    private long[] records = new long[3 * 64]; // fingerprint, seq, offset
    private int recordCount;
    private long[] directs = new long[3 * 4]; // fingerprint, seq, region id
    private int directCount;

    /** Starts summarizing {@code id} (-1: none), forgetting what was listed before. */
    void restart(long id) {
        regionId = id;
        recordCount = 0;
        directCount = 0;
        if (records.length > 3 * 4096) {
            records = new long[3 * 64];
        }
    }

    long regionId() {
        return regionId;
    }

    /** Whether it lists nothing. */
    boolean isEmpty() {
        return recordCount == 0 && directCount == 0;
    }

    /** A record appended to the summarized region at {@code offset}. */
    void record(long fingerprint, long seq, long offset) {
        records = append(records, recordCount++, fingerprint, seq, offset);
    }

    /** A direct write adopted as region {@code region} while the summarized region was the active one. */
    void direct(long fingerprint, long seq, long region) {
        directs = append(directs, directCount++, fingerprint, seq, region);
    }

    /** Puts the triple (a, b, c) at index {@code i} of {@code triples}, grown if need be; returns the array. */
    private static long[] append(long[] triples, int i, long a, long b, long c) {
        long[] t = 3 * (i + 1) > triples.length ? Arrays.copyOf(triples, triples.length * 2) : triples;
        t[3 * i] = a;
        t[3 * i + 1] = b;
        t[3 * i + 2] = c;
        return t;
    }

    /** Forgets the records at or past {@code offset}: a failed write cut the region back there. */
    void cutBack(long offset) {
        while (recordCount > 0 && records[3 * (recordCount - 1) + 2] >= offset) {
            recordCount--;
        }
    }

    /** Bytes of the seal payload. */
    int payloadLength() {
        return HEAD + 24 * directCount + 16 * recordCount;
    }

    /** The seal payload for the summarized region, which is {@code length} bytes long now. */
    ByteBuffer payload(long length) {
        ByteBuffer b = ByteBuffer.allocate(payloadLength()).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(VERSION).putLong(regionId).putLong(length).putInt(directCount).putInt(recordCount);
        for (int i = 0; i < directCount; i++) {
            b.putLong(directs[3 * i]).putLong(directs[3 * i + 1]).putLong(directs[3 * i + 2]);
        }
        for (int i = 0; i < recordCount; i++) {
            b.putLong(records[3 * i]).putLong(records[3 * i + 1]);
        }
        return b.flip();
    }

    /** What a seal's head says: the region summarized, its length, and how many direct writes and records it lists. */
    record Head(long regionId, long length, int directCount, int recordCount) {
        static Head parse(ByteBuffer b) {
            b.order(ByteOrder.LITTLE_ENDIAN);
            int version = b.getInt(0);
            if (version != VERSION) {
                throw new IllegalStateException("seal record of version " + version + " (this version reads "
                        + VERSION + ")");
            }
            return new Head(b.getLong(4), b.getLong(12), b.getInt(20), b.getInt(24));
        }

        /** Where the record list starts in the payload. */
        long recordsOffset() {
            return HEAD + 24L * directCount;
        }
    }
}
