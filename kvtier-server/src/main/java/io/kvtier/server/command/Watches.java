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

    private final ConcurrentHashMap<ByteBuffer, Set<Watch>> byKey = new ConcurrentHashMap<>();
    private final AtomicInteger watching = new AtomicInteger();

    /** One connection's watched keys, and whether one of them changed since it was watched. */
    static final class Watch {
        private final Set<ByteBuffer> keys = new HashSet<>();
        private volatile boolean broken;

        boolean broken() {
            return broken;
        }

        int size() {
            return keys.size();
        }
    }

    /** Adds {@code keys} to {@code w} (null: a new watch); returns the watch. Event-loop confined per connection. */
    Watch watch(Watch w, byte[][] keys) {
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
