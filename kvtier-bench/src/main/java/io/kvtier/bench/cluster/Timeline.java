package io.kvtier.bench.cluster;

import io.kvtier.client.cluster.CommandObserver;
import java.time.Duration;
import java.util.BitSet;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts every routed command of the failover run into fixed time buckets (100 ms by default) by completion time:
 * reads and writes that succeeded, reads and writes that failed, the longest latency, and successes on the keys the
 * killed node was primary of; and errors by kind over the whole run. Commands that started before {@link #start} (preload, warm-up) are not counted.
 * Thread-safe (atomic arrays), called from I/O and timer threads; {@link #snapshot} is taken once the load stopped.
 */
final class Timeline implements CommandObserver {
    private final long bucketNanos;
    private final int buckets;
    private final AtomicLongArray readsOk;
    private final AtomicLongArray writesOk;
    private final AtomicLongArray readErrors;
    private final AtomicLongArray writeErrors;
    private final AtomicLongArray victimOk;
    private final AtomicLongArray maxLatencyNanos;
    private final AtomicLongArray lastErrorNanos;
    private final ConcurrentHashMap<String, LongAdder> errorKinds = new ConcurrentHashMap<>();
    private final AtomicLong firstVictimOkNanos = new AtomicLong(Long.MAX_VALUE);
    private volatile long originNanos = Long.MAX_VALUE;
    private volatile long killNanos = Long.MAX_VALUE;
    private volatile BitSet victimSlots = new BitSet();

    /** Buckets for {@code length} plus {@code slack} (commands still in flight at the end complete after it). */
    Timeline(Duration bucket, Duration length, Duration slack) {
        this.bucketNanos = bucket.toNanos();
        this.buckets = (int) Math.ceilDiv(length.plus(slack).toNanos(), bucketNanos);
        this.readsOk = new AtomicLongArray(buckets);
        this.writesOk = new AtomicLongArray(buckets);
        this.readErrors = new AtomicLongArray(buckets);
        this.writeErrors = new AtomicLongArray(buckets);
        this.victimOk = new AtomicLongArray(buckets);
        this.maxLatencyNanos = new AtomicLongArray(buckets);
        this.lastErrorNanos = new AtomicLongArray(buckets);
    }

    /** From now on commands are counted; time 0 of the timeline. */
    void start() {
        originNanos = System.nanoTime();
    }

    long originNanos() {
        return originNanos;
    }

    /** Seconds since {@link #start} of a {@link System#nanoTime} instant. */
    double seconds(long nanos) {
        return (nanos - originNanos) / 1e9;
    }

    /** The node about to be killed was primary of {@code slots}: successes on them after now are counted apart. */
    void markKill(long nanos, BitSet slots) {
        victimSlots = (BitSet) slots.clone();
        killNanos = nanos;
    }

    @Override
    public void completed(int slot, boolean write, long startNanos, long endNanos, String error) {
        boolean ok = error == null;
        long origin = originNanos;
        if (startNanos < origin) {
            return;
        }
        int b = (int) Math.min(buckets - 1, (endNanos - origin) / bucketNanos);
        long latency = endNanos - startNanos;
        maxLatencyNanos.accumulateAndGet(b, latency, Math::max);
        if (ok) {
            (write ? writesOk : readsOk).incrementAndGet(b);
            if (startNanos >= killNanos && victimSlots.get(slot)) {
                victimOk.incrementAndGet(b);
                firstVictimOkNanos.accumulateAndGet(endNanos - origin, Math::min);
            }
        } else {
            (write ? writeErrors : readErrors).incrementAndGet(b);
            errorKinds.computeIfAbsent(error, k -> new LongAdder()).increment();
            lastErrorNanos.accumulateAndGet(b, endNanos - origin, Math::max);
        }
    }

    /** The counts so far; call once the load has stopped for final figures. */
    TimelineData snapshot(int usedBuckets) {
        int n = Math.min(usedBuckets, buckets);
        long[][] columns = new long[TimelineData.COLUMNS][n];
        for (int i = 0; i < n; i++) {
            columns[TimelineData.READS_OK][i] = readsOk.get(i);
            columns[TimelineData.WRITES_OK][i] = writesOk.get(i);
            columns[TimelineData.READ_ERRORS][i] = readErrors.get(i);
            columns[TimelineData.WRITE_ERRORS][i] = writeErrors.get(i);
            columns[TimelineData.VICTIM_OK][i] = victimOk.get(i);
            columns[TimelineData.MAX_LATENCY_NANOS][i] = maxLatencyNanos.get(i);
            columns[TimelineData.LAST_ERROR_NANOS][i] = lastErrorNanos.get(i);
        }
        long first = firstVictimOkNanos.get();
        Map<String, Long> kinds = new TreeMap<>();
        errorKinds.forEach((k, v) -> kinds.put(k, v.sum()));
        return new TimelineData(bucketNanos, columns, first == Long.MAX_VALUE ? -1 : first, kinds);
    }

    int bucketsFor(Duration length) {
        return (int) Math.ceilDiv(length.toNanos(), bucketNanos);
    }
}
