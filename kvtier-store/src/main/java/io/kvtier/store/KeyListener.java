package io.kvtier.store;

/**
 * Told when a version of a key enters or leaves the store, for accounting above the store (per-model statistics) and
 * for keys whose fate is tied to another's. Called on store and network threads, never under a store lock, but often
 * on a hot path: implementations must be fast, thread-safe, and must not block.
 */
public interface KeyListener {
    /** Why a version left the store. */
    enum Removal {
        /** Overwritten by a newer version of the same key. */
        REPLACED,
        /** Deleted (DEL, FLUSHALL, a pin-less cleanup). */
        DELETED,
        /** Its expiry passed. */
        EXPIRED,
        /** Dropped by the store: its disk region was evicted for room, or its record failed its checksum. */
        LOST
    }

    KeyListener NONE = new KeyListener() {
        @Override
        public void added(byte[] key, long length) {
        }

        @Override
        public void removed(byte[] key, long length, Removal why, long seq) {
        }
    };

    /** A version of {@code key} of {@code length} bytes is now live (written, or recovered at start). */
    void added(byte[] key, long length);

    /**
     * A version of {@code key} of {@code length} bytes is gone, for reason {@code why}. {@code seq} is a sequence
     * number of the store at or after the removal: any version written later has a higher one, which
     * {@link TieredStore#removeIfOlder} tells apart.
     */
    void removed(byte[] key, long length, Removal why, long seq);

    /** The live version of {@code key} changed without being replaced: its expiry was set or cleared. */
    default void changed(byte[] key) {
    }

    /** Tells {@code first}, then {@code second}, of everything. */
    static KeyListener both(KeyListener first, KeyListener second) {
        return new KeyListener() {
            @Override
            public void added(byte[] key, long length) {
                first.added(key, length);
                second.added(key, length);
            }

            @Override
            public void removed(byte[] key, long length, Removal why, long seq) {
                first.removed(key, length, why, seq);
                second.removed(key, length, why, seq);
            }

            @Override
            public void changed(byte[] key) {
                first.changed(key);
                second.changed(key);
            }
        };
    }
}
