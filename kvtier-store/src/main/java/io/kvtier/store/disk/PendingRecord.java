package io.kvtier.store.disk;

import java.nio.ByteBuffer;

/** A record to append: the value's bytes as buffers (read-only views of memory-tier pages), or none for a tombstone. */
public record PendingRecord(byte[] key, long seq, long expireAt, byte type, ByteBuffer[] value, int valueLength,
                            long version) {
    /** A value record; {@code version} is the value's cluster version (0 outside a cluster). */
    public static PendingRecord value(byte[] key, long seq, long expireAt, ByteBuffer[] value, long valueLength,
                                      long version) {
        return new PendingRecord(key, seq, expireAt, RecordFormat.TYPE_VALUE, value, Math.toIntExact(valueLength),
                version);
    }

    public static PendingRecord tombstone(byte[] key, long seq) {
        return new PendingRecord(key, seq, 0, RecordFormat.TYPE_TOMBSTONE, new ByteBuffer[0], 0, 0);
    }

    /** An expiry change for the version of {@code key} written with sequence number {@code valueSeq}. */
    public static PendingRecord expiry(byte[] key, long seq, long expireAt, long valueSeq) {
        ByteBuffer target = ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(0, valueSeq);
        return new PendingRecord(key, seq, expireAt, RecordFormat.TYPE_EXPIRY, new ByteBuffer[] {target}, 8, 0);
    }

    /** A seal: the summary of the region written before (see RegionSummary); {@code seq} is the log's newest. */
    static PendingRecord seal(long seq, ByteBuffer payload) {
        return new PendingRecord(new byte[0], seq, 0, RecordFormat.TYPE_SEAL, new ByteBuffer[] {payload},
                payload.remaining(), 0);
    }

    /** Bytes on disk, trailer included. */
    long length() {
        return RecordFormat.footprint(key.length, valueLength);
    }
}
