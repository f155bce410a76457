package io.kvtier.store.disk;

/**
 * One intact record found by the start-up scan, in log order; {@code type} is one of RecordFormat's TYPE_*, and
 * {@code target} is, for an expiry record, the sequence number of the version it applies to (else 0).
 */
public record RecoveredRecord(byte[] key, long seq, long expireAt, byte type, long target, DiskLocation location) {
}
