package io.kvtier.store.disk;

/**
 * One record found by the start-up scan, in log order: {@code type} is one of RecordFormat's TYPE_* for an intact
 * record ({@code target} is, for an expiry record, the sequence number of the version it applies to, else 0), or
 * {@link #DAMAGED} / {@link #DAMAGED_UNKNOWN} for damage the scan could bound (key and location are then null).
 */
public record RecoveredRecord(byte[] key, long seq, long expireAt, byte type, long target, DiskLocation location,
                              long version) {
    /**
     * A damaged record of the key whose {@link RecordFormat#fingerprint} is {@code target}, with sequence number
     * {@code seq}: that key's intact records older than {@code seq} must not be served (the damaged one may have
     * deleted or overwritten them).
     */
    public static final byte DAMAGED = -1;
    /**
     * Damaged records of unknown keys, each with a sequence number at most {@code seq}: no key whose newest intact
     * record is older than {@code seq}, in the directory numbered {@code target} (DiskSet), may be served.
     */
    public static final byte DAMAGED_UNKNOWN = -2;

    static RecoveredRecord damaged(long fingerprint, long seq) {
        return new RecoveredRecord(null, seq, 0, DAMAGED, fingerprint, null, 0);
    }

    static RecoveredRecord damagedUnknown(long seqBound) {
        return damagedUnknown(seqBound, 0);
    }

    /** As above, found in the directory numbered {@code directory} of a DiskSet. */
    static RecoveredRecord damagedUnknown(long seqBound, int directory) {
        return new RecoveredRecord(null, seqBound, 0, DAMAGED_UNKNOWN, directory, null, 0);
    }
}
