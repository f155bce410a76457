package io.kvtier.router.sim;

/**
 * Where an engine keeps the KV chunks its GPU cannot: kvtier, over RESP or shared memory ({@link KvConnector}), or the
 * engine's own CPU memory ({@link LocalCpuCache}: vLLM's native CPU offloading, LMCache's local CPU tier). The
 * scheduler looks up and the step loop loads and stores through it, on the engine's threads.
 */
interface ChunkOffload extends AutoCloseable {
    int chunkTokens();

    /** The chain hashes of {@code tokens}' full chunks. */
    long[] chunkHashes(int[] tokens);

    /** Chunks, from the first, held; blocks for the round trips. */
    int lookup(long[] hashes);

    /**
     * A load's outcome: whether every chunk came whole, and how long the load of the real bytes takes in the model:
     * its fixed part (round trips) as measured, its per-byte part measured and scaled up by the run's bytes scale.
     */
    record Loaded(boolean ok, long nanos) {
    }

    /** Loads chunks {@code [from, to)} and waits for them. */
    Loaded load(long[] hashes, int from, int to);

    /**
     * The model's time for a transfer measured at {@code measured} nanoseconds, {@code fixed} of them round trips,
     * when only {@code scale} of the real bytes moved: the fixed part as it is, the rest scaled up.
     */
    static long modeled(long measured, long fixed, double scale) {
        long f = Math.min(Math.max(0, fixed), measured);
        return f + (long) ((measured - f) / scale);
    }

    /** Queues chunks {@code [from, to)} for storing; returns at once. */
    void store(long[] hashes, int from, int to);

    long bytesRead();

    long bytesWritten();

    long storesDropped();

    long storeFailures();

    long loadFailures();

    @Override
    void close();
}
