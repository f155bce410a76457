package io.kvtier.events;

/**
 * One change to a key on a kvtier node: {@code length} is the value's size in bytes, {@code tier} where it now is
 * (null for removals).
 */
public record StoreEvent(Kind kind, byte[] key, long length, Tier tier) {
    /** What happened; the wire name is the lower-case name. */
    public enum Kind {
        /** A version was written (or, in a snapshot, is there): it is in {@code tier}. */
        STORED,
        /** The live version moved to {@code tier}: demoted to disk, or promoted back to memory. */
        MOVED,
        /** Deleted (DEL, an overwrite's old version is not reported: the new one's STORED replaces it). */
        DELETED,
        /** Its expiry passed. */
        EXPIRED,
        /** Dropped by the store: its disk region was evicted for room, or its record failed its checksum. */
        EVICTED;

        final String wire = name().toLowerCase(java.util.Locale.ROOT);
    }

    /** Where a value can be read from: memory (no I/O) or disk. The wire name is the lower-case name. */
    public enum Tier {
        MEMORY, DISK;

        final String wire = name().toLowerCase(java.util.Locale.ROOT);
    }

    public boolean isRemoval() {
        return kind == Kind.DELETED || kind == Kind.EXPIRED || kind == Kind.EVICTED;
    }
}
