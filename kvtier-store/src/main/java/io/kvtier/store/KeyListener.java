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

    /**
     * As {@link #added(byte[], long)}, saying where the version is: in memory, or (a value too large for memory,
     * or recovered at start) on disk only. The store calls this one; by default it calls the other.
     */
    default void added(byte[] key, long length, Residence where) {
        added(key, length);
    }

    /**
     * The live version of {@code key} moved: demoted to disk (its memory copy dropped), or promoted back to memory.
     * Called after the move, outside the store's locks; moves of one key are told in order, but a move may be told
     * just before the {@link #added} of the version it moved (different threads).
     */
    default void moved(byte[] key, long length, Residence to) {
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
            public void added(byte[] key, long length, Residence where) {
                first.added(key, length, where);
                second.added(key, length, where);
            }

            @Override
            public void moved(byte[] key, long length, Residence to) {
                first.moved(key, length, to);
                second.moved(key, length, to);
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
