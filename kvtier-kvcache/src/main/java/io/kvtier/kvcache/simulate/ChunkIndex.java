package io.kvtier.kvcache.simulate;

/**
 * The simulated store's index: chunk key to entry, open addressing with linear probing over primitive keys (no
 * boxing: it is looked up for every chunk of every request of every budget). Removal shifts the probe run back, so
 * there are no tombstones. Not thread-safe.
 */
final class ChunkIndex {
    private long[] keys = new long[1024];
    private ChunkEntry[] values = new ChunkEntry[1024];
    private int size;

    ChunkEntry get(long key) {
        int mask = keys.length - 1;
        for (int i = slot(key, mask); ; i = (i + 1) & mask) {
            ChunkEntry v = values[i];
            if (v == null || keys[i] == key) {
                return v;
            }
        }
    }

    /** Adds an entry for a key not present. */
    void add(ChunkEntry e) {
        if (2 * (size + 1) > keys.length) {
            grow();
        }
        insert(e.key, e);
        size++;
    }

    void remove(long key) {
        int mask = keys.length - 1;
        int i = slot(key, mask);
        while (values[i] != null && keys[i] != key) {
            i = (i + 1) & mask;
        }
        if (values[i] == null) {
            return;
        }
        values[i] = null;
        size--;
        for (int j = (i + 1) & mask; values[j] != null; j = (j + 1) & mask) {
            int home = slot(keys[j], mask);
            // move j back into the hole at i unless its home lies cyclically in (i, j]
            if (((j - home) & mask) >= ((j - i) & mask)) {
                keys[i] = keys[j];
                values[i] = values[j];
                values[j] = null;
                i = j;
            }
        }
    }

    int size() {
        return size;
    }

    private void insert(long key, ChunkEntry e) {
        int mask = keys.length - 1;
        int i = slot(key, mask);
        while (values[i] != null) {
            i = (i + 1) & mask;
        }
        keys[i] = key;
        values[i] = e;
    }

    private void grow() {
        long[] oldKeys = keys;
        ChunkEntry[] oldValues = values;
        keys = new long[oldKeys.length * 2];
        values = new ChunkEntry[oldKeys.length * 2];
        for (int i = 0; i < oldKeys.length; i++) {
            if (oldValues[i] != null) {
                insert(oldKeys[i], oldValues[i]);
            }
        }
    }

    private static int slot(long key, int mask) {
        return (int) ChunkEntry.mix(key) & mask;
    }
}
