package io.kvtier.server.command;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Server-side SCAN cursors. A cursor names a weakly consistent iterator over the index, which returns every key
 * present for the whole scan exactly once — the guarantee SCAN promises. At most {@link #MAX} cursors live; the
 * least recently used is dropped beyond that, and using a dropped cursor is an "invalid cursor" error. Thread-safe.
 */
final class ScanCursors {
    static final int MAX = 4096;

    private final Map<Long, Iterator<byte[]>> cursors = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Iterator<byte[]>> eldest) {
            return size() > MAX;
        }
    };

    synchronized long register(Iterator<byte[]> it) {
        long id;
        do {
            id = ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
        } while (cursors.containsKey(id));
        cursors.put(id, it);
        return id;
    }

    /** Takes the iterator of {@code cursor} out of the table (the caller re-registers it if it has more). */
    synchronized Iterator<byte[]> take(long cursor) {
        return cursors.remove(cursor);
    }
}
