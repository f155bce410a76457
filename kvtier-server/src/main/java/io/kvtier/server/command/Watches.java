package io.kvtier.server.command;

import io.kvtier.server.reply.CommandException;
import io.kvtier.store.KeyListener;
import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * WATCH: which connections watch which keys, told by the store of every change to a key (written, overwritten,
 * deleted, expired, evicted, its TTL set or cleared), as Redis's "touched" rule: any change after WATCH fails the
 * EXEC, even one that leaves the same value. The store tells it synchronously, before the changing command's reply,
 * so a client that saw a write's reply and then runs EXEC finds the watch broken. Costs one volatile read per change
 * while nobody watches. Thread-safe.
 */
public final class Watches implements KeyListener {
    /** Most keys one connection may watch at once (Redis has no limit; this bounds the heap a client can hold). */
    static final int MAX_KEYS_PER_CONNECTION = 100_000;
    /**
     * Heap one watched key holds beyond its bytes (its copy's header, its ByteBuffer, a node in the connection's set
     * and in the key map, and the key's set of watchers): charged to the connection's share of the client heap
     * budget, as Redis counts watched keys in a client's memory.
     */
    static final int HEAP_PER_KEY = 352;

    private final ConcurrentHashMap<ByteBuffer, Set<Watch>> byKey = new ConcurrentHashMap<>();
    private final AtomicInteger watching = new AtomicInteger();

    /** One connection's watched keys, and whether one of them changed since it was watched. */
    static final class Watch {
        private final Set<ByteBuffer> keys = new HashSet<>();
        private volatile boolean broken;
        /** Heap charged to the connection's client budget for these keys. */
        private long charged;

        long charged() {
            return charged;
        }

        boolean broken() {
            return broken;
        }

        int size() {
            return keys.size();
        }
    }

    /**
     * Adds {@code keys} to {@code w} (null: a new watch); returns the watch. {@code charge} is asked for the heap the
     * new keys will hold, before any is added; when it refuses, nothing is added and the client memory error thrown.
     * Event-loop confined per connection.
     */
    Watch watch(Watch w, byte[][] keys, java.util.function.LongPredicate charge) {
        Watch watch = w == null ? new Watch() : w;
        Set<ByteBuffer> added = new HashSet<>();
        for (byte[] k : keys) {
            ByteBuffer key = ByteBuffer.wrap(k);
            if (!watch.keys.contains(key)) {
                added.add(key);
            }
        }
        if (watch.keys.size() + added.size() > MAX_KEYS_PER_CONNECTION) {
            throw new CommandException("ERR a connection may WATCH at most " + MAX_KEYS_PER_CONNECTION + " keys");
        }
        long bytes = 0;
        for (ByteBuffer key : added) {
            bytes += HEAP_PER_KEY + key.remaining();
        }
        if (bytes > 0 && !charge.test(bytes)) {
            throw new CommandException(CLIENT_MEMORY);
        }
        watch.charged += bytes;
        if (w == null) {
            watching.incrementAndGet();
        }
        for (ByteBuffer key : added) {
            ByteBuffer copy = ByteBuffer.wrap(key.array().clone());
            watch.keys.add(copy);
            byKey.computeIfAbsent(copy, x -> ConcurrentHashMap.newKeySet()).add(watch);
        }
        return watch;
    }

    /** The error for a WATCH that would take the clients' heap over its budget, this connection holding the most. */
    static final String CLIENT_MEMORY = "ERR client memory limit reached: watched keys and requests in progress "
            + "would hold more heap than maxmemory-clients allows, this connection the most";

    /** Forgets {@code w} (UNWATCH, EXEC, DISCARD, a closed connection). Null is allowed. */
    void unwatch(Watch w) {
        if (w == null) {
            return;
        }
        for (ByteBuffer key : w.keys) {
            byKey.computeIfPresent(key, (k, set) -> {
                set.remove(w);
                return set.isEmpty() ? null : set;
            });
        }
        w.keys.clear();
        watching.decrementAndGet();
    }

    private void touched(byte[] key) {
        if (watching.get() == 0) {
            return;
        }
        Set<Watch> set = byKey.get(ByteBuffer.wrap(key));
        if (set != null) {
            for (Watch w : set) {
                w.broken = true;
            }
        }
    }

    @Override
    public void added(byte[] key, long length) {
        touched(key);
    }

    @Override
    public void removed(byte[] key, long length, Removal why, long seq) {
        touched(key);
    }

    @Override
    public void changed(byte[] key) {
        touched(key);
    }
}
