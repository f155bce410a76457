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

    /** Loads chunks {@code [from, to)} and waits for them: true when every one came whole. */
    boolean load(long[] hashes, int from, int to);

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
