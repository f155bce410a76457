package io.kvtier.store.disk;

/** One intact record found by the start-up scan, in log order; {@code type} is one of RecordFormat's TYPE_*. */
public record RecoveredRecord(byte[] key, long seq, long expireAt, byte type, DiskLocation location) {
}
