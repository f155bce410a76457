package io.kvtier.router.sim;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Where an engine keeps the KV chunks its GPU cannot: kvtier, over RESP or shared memory ({@link KvConnector}), or the
 * engine's own CPU memory ({@link LocalCpuCache}: vLLM's native CPU offloading, LMCache's local CPU tier). The
 * scheduler looks up and the step loop loads and stores through it, on the engine's threads. It keeps the counters
 * every kind reports (the engine's stats).
 */
abstract class ChunkOffload implements AutoCloseable {
    /** Bytes moved: loaded, stored (of the run's scaled values). */
    final AtomicLong bytesRead = new AtomicLong();
    final AtomicLong bytesWritten = new AtomicLong();
    /** Chunks not stored (the store buffer or the tier full), stores that failed, loads that did not come whole. */
    final AtomicLong storesDropped = new AtomicLong();
    final AtomicLong storeFailures = new AtomicLong();
    final AtomicLong loadFailures = new AtomicLong();

    abstract int chunkTokens();

    /** The chain hashes of {@code tokens}' full chunks. */
    abstract long[] chunkHashes(int[] tokens);

    /** Chunks, from the first, held; blocks for the round trips. */
    abstract int lookup(long[] hashes);

    /**
     * A load's outcome: whether every chunk came whole, and how long the load of the real bytes takes in the model:
     * its fixed part (round trips) as measured, its per-byte part measured and scaled up by the run's bytes scale.
     */
    record Loaded(boolean ok, long nanos) {
    }

    /** Loads chunks {@code [from, to)} and waits for them. */
    abstract Loaded load(long[] hashes, int from, int to);

    /**
     * The model's time for a transfer measured at {@code measured} nanoseconds, {@code fixed} of them round trips,
     * when only {@code scale} of the real bytes moved: the fixed part as it is, the rest scaled up.
     */
    static long modeled(long measured, long fixed, double scale) {
        long f = Math.min(Math.max(0, fixed), measured);
        return f + (long) ((measured - f) / scale);
    }

    /** Queues chunks {@code [from, to)} for storing; returns at once. */
    abstract void store(long[] hashes, int from, int to);

    final long bytesRead() {
        return bytesRead.get();
    }

    final long bytesWritten() {
        return bytesWritten.get();
    }

    final long storesDropped() {
        return storesDropped.get();
    }

    final long storeFailures() {
        return storeFailures.get();
    }

    final long loadFailures() {
        return loadFailures.get();
    }

    @Override
    public abstract void close();
}
