package io.kvtier.server.metrics;

import io.netty.util.concurrent.FastThreadLocal;
import io.netty.util.concurrent.FastThreadLocalThread;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CopyOnWriteArrayList;

/*
 * Why: every command records its count, time and latency bucket. Recorded into shared LongAdders and Prometheus's
 * histogram (whose observation count is one AtomicLong a command name, written by every event loop), that was five
 * to seven atomic read-modify-writes a command and a cache line all loops wrote (BENCHMARKS.md, issue 16). Here each
 * event loop owns a slab of plain longs that only it writes; whoever reads (a scrape, INFO) sums the slabs. A
 * command that completes on another thread (rare: most completions hop back to their loop) records into one shared
 * slab under its monitor.
 */

/**
 * Counts, total time, failures, refusals and latency buckets of each command, per event loop without atomic
 * instructions, summed when read. Thread-safe. Commands are numbered by the caller ({@code id}, dense from 0).
 */
final class CommandCounts {
    /** The latency buckets' upper bounds, in seconds (Prometheus's {@code le}); a last bucket above them. */
    static final double[] UPPER_BOUNDS = {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
        0.1, 0.25, 0.5, 1, 2.5, 5, 10};
    static final int CALLS = 0;
    static final int NANOS = 1;
    static final int FAILED = 2;
    static final int REJECTED = 3;
    static final int BUCKETS = 4;
    /** Longs a command takes in a slab: the four counts, then one a bucket, the last for +Inf. */
    static final int STRIDE = BUCKETS + UPPER_BOUNDS.length + 1;

    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);
    private static final long[] UPPER_BOUND_NANOS = new long[UPPER_BOUNDS.length];

    static {
        for (int i = 0; i < UPPER_BOUNDS.length; i++) {
            UPPER_BOUND_NANOS[i] = Math.round(UPPER_BOUNDS[i] * 1e9);
        }
    }

    private final CopyOnWriteArrayList<Slab> slabs = new CopyOnWriteArrayList<>();
    /** For threads that are not event loops, shared; written under its monitor. */
    private final Slab shared = new Slab();
    private final FastThreadLocal<Slab> own = new FastThreadLocal<>() {
        @Override
        protected Slab initialValue() {
            Slab s = new Slab();
            slabs.add(s);
            return s;
        }
    };

    CommandCounts() {
        slabs.add(shared);
    }

    /** Records one command that ran. */
    void ran(int id, boolean failed, long nanos) {
        int bucket = bucket(nanos);
        if (Thread.currentThread() instanceof FastThreadLocalThread) {
            own.get().ran(id, failed, nanos, bucket);
        } else {
            synchronized (shared) {
                shared.ran(id, failed, nanos, bucket);
            }
        }
    }

    /** Records one command refused before it ran. */
    void rejected(int id) {
        if (Thread.currentThread() instanceof FastThreadLocalThread) {
            own.get().add(id, REJECTED, 1);
        } else {
            synchronized (shared) {
                shared.add(id, REJECTED, 1);
            }
        }
    }

    /** The sums over every slab of command {@code id}'s {@link #STRIDE} longs, in slab order. */
    long[] sum(int id) {
        long[] total = new long[STRIDE];
        for (Slab s : slabs) {
            long[] d = s.data;
            int base = id * STRIDE;
            if (base + STRIDE <= d.length) {
                for (int i = 0; i < STRIDE; i++) {
                    total[i] += (long) LONGS.getOpaque(d, base + i);
                }
            }
        }
        return total;
    }

    static int bucket(long nanos) {
        for (int i = 0; i < UPPER_BOUND_NANOS.length; i++) {
            if (nanos <= UPPER_BOUND_NANOS[i]) {
                return i;
            }
        }
        return UPPER_BOUND_NANOS.length;
    }

    /**
     * One writer's counts: {@link #STRIDE} longs a command. Written by one thread at a time (its loop, or under the
     * shared slab's monitor) with opaque stores, so that a reader sees whole values; grown by that writer, which copies
     * and then publishes the larger array.
     */
    private static final class Slab {
        private volatile long[] data = new long[16 * STRIDE];

        void ran(int id, boolean failed, long nanos, int bucket) {
            long[] d = array(id);
            int base = id * STRIDE;
            increment(d, base + CALLS, 1);
            increment(d, base + NANOS, nanos);
            if (failed) {
                increment(d, base + FAILED, 1);
            }
            increment(d, base + BUCKETS + bucket, 1);
        }

        void add(int id, int field, long n) {
            increment(array(id), id * STRIDE + field, n);
        }

        private long[] array(int id) {
            long[] d = data;
            int needed = (id + 1) * STRIDE;
            if (needed <= d.length) {
                return d;
            }
            long[] grown = new long[Math.max(needed, d.length * 2)];
            for (int i = 0; i < d.length; i++) {
                grown[i] = (long) LONGS.getOpaque(d, i);
            }
            data = grown;
            return grown;
        }

        private static void increment(long[] d, int i, long n) {
            LONGS.setOpaque(d, i, (long) LONGS.getOpaque(d, i) + n);
        }
    }
}
