package io.kvtier.store.disk;

/** Where one record lives: its region, byte offset and lengths. Immutable. */
public record DiskLocation(Region region, long offset, int keyLength, int valueLength) {
    public long recordLength() {
        return (long) region.layout().headerSize() + keyLength + valueLength;
    }

    /** Where the value starts, from the record's start. */
    public long valueStart() {
        return (long) region.layout().headerSize() + keyLength;
    }
}
