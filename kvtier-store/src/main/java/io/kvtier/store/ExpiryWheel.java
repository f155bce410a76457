package io.kvtier.store;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/*
 * A hierarchical timer wheel for key expiry (the idea of Caffeine's TimerWheel, after Varghese & Lauck, "Hashed and
 * Hierarchical Timing Wheels", SOSP 1987), replacing a sweep that rescanned every key with a TTL ten times a second.
 *
 * Layout. Five levels of buckets, each bucket a circular doubly-linked list threaded through the entries themselves
 * (Entry.timerPrev/timerNext: no object per key). Level i has 64 buckets of 2^(8 + 6i) ms: 256 ms, 16 s, 17 min,
 * 18 h; the last level is one bucket for deadlines beyond ~50 days. An entry sits in the bucket of the lowest level
 * whose range holds its deadline; a deadline already past goes to the current 256 ms bucket.
 *
 * Time. advance(now) is called every ~250 ms by the store's timer thread. For each level whose tick changed, it
 * empties the buckets from the previous tick up to the current one (at most all of them): entries due by now are
 * handed to the caller to expire, the others go back in at their (lower) level. A key thus leaves the index at most
 * one tick (256 ms) plus the timer period after its deadline; reads treat it as absent from the deadline on anyway.
 * An idle wheel costs one empty bucket check per tick: no work proportional to the number of keys.
 *
 * Concurrency. One lock guards every link; it is a leaf lock (taken with no index bin or entry monitor held, and
 * holding none while held). Writers schedule after they publish an entry and unschedule when it leaves the index;
 * schedule ignores an entry that is no longer live, so a retire that ran first cannot be undone by a late schedule
 * (retire marks the entry under its monitor before taking this lock). A bucket being emptied is first detached
 * whole, then drained in chunks of CHUNK entries per lock hold, so writers wait at most one chunk; an entry unlinked
 * or rescheduled meanwhile simply leaves the detached list. The caller re-checks each due entry before expiring it
 * (its deadline may have moved since it was handed over).
 */
/** Expiry deadlines of entries in a hierarchical timer wheel; every link is guarded by one lock. Thread-safe. */
final class ExpiryWheel {
    private static final int[] SHIFTS = {8, 14, 20, 26, 32};
    private static final int[] SIZES = {64, 64, 64, 64, 1};
    private static final int CHUNK = 1024;

    private final ReentrantLock lock = new ReentrantLock();
    private final Entry[][] wheel = new Entry[SHIFTS.length][];
    private long time;      // guarded by lock: epoch millis of the last advance
    private long scheduled; // guarded by lock

    ExpiryWheel(long now) {
        this.time = now;
        for (int i = 0; i < SHIFTS.length; i++) {
            wheel[i] = new Entry[SIZES[i]];
            for (int j = 0; j < SIZES[i]; j++) {
                wheel[i][j] = sentinel();
            }
        }
    }

    private static Entry sentinel() {
        Entry s = new Entry(null, -1, 0, 0, EntryState.DELETED);
        s.timerPrev = s;
        s.timerNext = s;
        return s;
    }

    /** Puts {@code e} at the bucket of its current deadline (moving it if queued); drops it if it has none. */
    void schedule(Entry e) {
        lock.lock();
        try {
            unlink(e);
            if (e.expireAt != 0 && e.state().isLive()) {
                link(bucketFor(e.expireAt), e);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Takes {@code e} out of the wheel, if it is there. */
    void unschedule(Entry e) {
        if (e.timerNext == null) {
            // A racy read: should it miss the timer re-linking e at this very moment, e stays queued until its
            // deadline and is dropped then (the caller re-checks every entry handed over).
            return;
        }
        lock.lock();
        try {
            unlink(e);
        } finally {
            lock.unlock();
        }
    }

    /** How many entries the wheel holds. */
    long size() {
        lock.lock();
        try {
            return scheduled;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Moves time to {@code now} and hands every entry whose deadline has passed to {@code due}, outside the lock.
     * Returns how many it handed over.
     */
    int advance(long now, Consumer<Entry> due) {
        List<Entry> detached = new ArrayList<>();
        lock.lock();
        try {
            long previous = time;
            if (now <= previous) {
                return 0;
            }
            time = now;
            for (int i = 0; i < SHIFTS.length; i++) {
                long prevTicks = previous >>> SHIFTS[i];
                long delta = (now >>> SHIFTS[i]) - prevTicks;
                if (delta <= 0) {
                    break;
                }
                int steps = (int) Math.min(1 + delta, SIZES[i]);
                for (int j = 0; j < steps; j++) {
                    detached.add(detach(wheel[i][(int) ((prevTicks + j) & (SIZES[i] - 1))]));
                }
            }
        } finally {
            lock.unlock();
        }
        int n = 0;
        for (Entry list : detached) {
            n += drain(list, now, due);
        }
        return n;
    }

    /** Moves the whole list of {@code bucket} onto a fresh sentinel, in O(1), and returns that. */
    private static Entry detach(Entry bucket) {
        Entry list = sentinel();
        if (bucket.timerNext != bucket) {
            list.timerNext = bucket.timerNext;
            list.timerPrev = bucket.timerPrev;
            list.timerNext.timerPrev = list;
            list.timerPrev.timerNext = list;
            bucket.timerNext = bucket;
            bucket.timerPrev = bucket;
        }
        return list;
    }

    private int drain(Entry list, long now, Consumer<Entry> due) {
        int n = 0;
        List<Entry> expired = new ArrayList<>();
        while (true) {
            expired.clear();
            boolean more;
            lock.lock();
            try {
                for (int k = 0; k < CHUNK && list.timerNext != list; k++) {
                    Entry e = list.timerNext;
                    unlink(e);
                    long at = e.expireAt;
                    if (at != 0 && at <= now) {
                        expired.add(e);
                    } else if (at != 0 && e.state().isLive()) {
                        link(bucketFor(at), e);
                    }
                }
                more = list.timerNext != list;
            } finally {
                lock.unlock();
            }
            expired.forEach(due);
            n += expired.size();
            if (!more) {
                return n;
            }
        }
    }

    /** The sentinel of the bucket for deadline {@code at}; caller holds the lock. */
    private Entry bucketFor(long at) {
        long t = Math.max(at, time);
        long duration = t - time;
        for (int i = 0; i < SHIFTS.length - 1; i++) {
            if (duration < 1L << SHIFTS[i + 1]) {
                return wheel[i][(int) ((t >>> SHIFTS[i]) & (SIZES[i] - 1))];
            }
        }
        return wheel[SHIFTS.length - 1][0];
    }

    private void link(Entry bucket, Entry e) {
        Entry last = bucket.timerPrev;
        e.timerPrev = last;
        e.timerNext = bucket;
        last.timerNext = e;
        bucket.timerPrev = e;
        scheduled++;
    }

    private void unlink(Entry e) {
        if (e.timerNext == null) {
            return;
        }
        e.timerPrev.timerNext = e.timerNext;
        e.timerNext.timerPrev = e.timerPrev;
        e.timerPrev = null;
        e.timerNext = null;
        scheduled--;
    }
}
