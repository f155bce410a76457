package io.kvtier.store.disk;

/** Where one record lives: its region, byte offset and lengths. Immutable. */
public record DiskLocation(Region region, long offset, int keyLength, int valueLength) {
    public long recordLength() {
        return (long) RecordFormat.HEADER_SIZE + keyLength + valueLength;
    }
}
