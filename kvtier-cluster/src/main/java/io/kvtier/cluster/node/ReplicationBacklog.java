package io.kvtier.cluster.node;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * Replication a primary has started and its backups have not all acknowledged yet (its lag): writes, calls to
 * backups and payload bytes in flight, and the age of the oldest write in flight. With {@code --replication sync} the
 * clients of those writes are still waiting; with async they already have their answers. Lock-free: the write path
 * adds to counters and claims one cell of a fixed table of start times by compare-and-set; readers (CLUSTER INFO,
 * {@code /metrics}) scan the table.
 */
public final class ReplicationBacklog {
    /** Cells of the start-time table: far more than the writes a node keeps in flight (clients x pipeline depth). */
    static final int CELLS = 4096;
    /** Cells a write tries before giving up on being timed; the table is sparse, so a few suffice. */
    private static final int PROBES = 8;
    /** A handle for a write that found no free cell: it is counted but its age is not seen. */
    public static final int UNTIMED = -1;

    private final AtomicLongArray started = new AtomicLongArray(CELLS); // System.nanoTime() of the write; 0 = free
    private final LongAdder writes = new LongAdder();
    private final LongAdder calls = new LongAdder();
    private final LongAdder bytes = new LongAdder();
    private final LongAdder untimed = new LongAdder();

    /** Records a write whose replication started at {@code startNanos}; returns the handle for {@link #writeEnded}. */
    public int writeStarted(long startNanos) {
        writes.increment();
        long stamp = startNanos == 0 ? 1 : startNanos; // 0 marks a free cell
        int at = ThreadLocalRandom.current().nextInt(CELLS);
        for (int i = 0; i < PROBES; i++) {
            int cell = (at + i) & (CELLS - 1);
            if (started.get(cell) == 0 && started.compareAndSet(cell, 0, stamp)) {
                return cell;
            }
        }
        untimed.increment();
        return UNTIMED;
    }

    /** Records that every backup answered (or failed) the write {@code handle} came from. */
    public void writeEnded(int handle) {
        writes.decrement();
        if (handle != UNTIMED) {
            started.set(handle, 0);
        }
    }

    /** Records {@code n} calls to backups carrying {@code payload} bytes in all, sent and not answered yet. */
    public void callsStarted(int n, long payload) {
        calls.add(n);
        bytes.add(payload);
    }

    public void callsEnded(int n, long payload) {
        calls.add(-n);
        bytes.add(-payload);
    }

    /** Writes applied here whose backups have not all answered. */
    public long writes() {
        return Math.max(0, writes.sum());
    }

    /** Replication calls to backups not answered yet. */
    public long calls() {
        return Math.max(0, calls.sum());
    }

    /** Keys and values those calls carry, in bytes. */
    public long bytes() {
        return Math.max(0, bytes.sum());
    }

    /** Writes that found the start-time table full, since start (their age is not in {@link #oldestAgeMillis}). */
    public long untimed() {
        return untimed.sum();
    }

    /** Age of the oldest write in flight, in milliseconds; 0 when none is. */
    public long oldestAgeMillis() {
        long now = System.nanoTime();
        long oldest = 0;
        for (int i = 0; i < CELLS; i++) {
            long stamp = started.get(i);
            if (stamp != 0) {
                oldest = Math.max(oldest, now - stamp); // differences: nanoTime may wrap
            }
        }
        return oldest / 1_000_000;
    }
}
