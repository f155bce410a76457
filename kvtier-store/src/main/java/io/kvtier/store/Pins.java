package io.kvtier.store;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Keys pinned in memory (KVC.PIN): their values are never offered to the memory tier's policy, so the demoter never
 * moves them to disk. Pinned bytes are bounded by a budget, a share of the memory budget. A pin outlives overwrites
 * of its key (the new version is pinned and re-counted, even past the budget: the pin was granted) but not a delete,
 * an expiry or a loss; a pin with a deadline ends then. Pins live in memory only: a restart forgets them. Thread-safe;
 * pin and unpin are rare, so accounting is simply synchronized.
 */
final class Pins {
    private record Pin(long untilMillis, long bytes) {
    }

    private final ConcurrentHashMap<Key, Pin> pins = new ConcurrentHashMap<>();
    private final long budget;
    private long bytes; // guarded by this

    Pins(long budget) {
        this.budget = budget;
    }

    boolean contains(Key key) {
        return pins.containsKey(key);
    }

    /** Whether the key of {@code e} is pinned; costs no {@link Key} while nothing is pinned (almost always). */
    boolean contains(Entry e) {
        return !pins.isEmpty() && pins.containsKey(e.key());
    }

    /** Pins {@code key} (or renews its pin) at {@code length} bytes until {@code untilMillis} (0: until unpinned). */
    synchronized void pin(Key key, long length, long untilMillis) {
        Pin old = pins.get(key);
        long extra = length - (old == null ? 0 : old.bytes);
        if (extra > 0 && bytes + extra > budget) {
            throw new PinBudgetException(length, bytes, budget);
        }
        bytes += extra;
        pins.put(key, new Pin(untilMillis, length));
    }

    /** A new version of {@code key} replaced a pinned one: counts its length instead. */
    synchronized void resized(Key key, long length) {
        Pin old = pins.get(key);
        if (old != null) {
            bytes += length - old.bytes;
            pins.put(key, new Pin(old.untilMillis, length));
        }
    }

    /** Ends {@code key}'s pin; false if it had none. */
    synchronized boolean unpin(Key key) {
        Pin old = pins.remove(key);
        if (old == null) {
            return false;
        }
        bytes -= old.bytes;
        return true;
    }

    /** Every pinned key. */
    List<Key> keys() {
        return new ArrayList<>(pins.keySet());
    }

    /** Pins whose deadline has passed. */
    List<Key> due(long now) {
        List<Key> due = new ArrayList<>();
        pins.forEach((k, p) -> {
            if (p.untilMillis != 0 && p.untilMillis <= now) {
                due.add(k);
            }
        });
        return due;
    }

    synchronized long bytes() {
        return bytes;
    }

    long budget() {
        return budget;
    }

    int count() {
        return pins.size();
    }

    synchronized void clear() {
        pins.clear();
        bytes = 0;
    }
}
