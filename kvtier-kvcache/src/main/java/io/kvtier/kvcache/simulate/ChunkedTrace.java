package io.kvtier.kvcache.simulate;

/**
 * A trace as {@link Replay} serves it: requests in serving order, each a prompt (and an answer) cut into chunks,
 * each chunk with a key; two chunks with one key hold the same tokens, so one serves for the other. A {@link Trace}
 * derives its keys from sessions and shared prefixes; a {@link BlockTrace} carries them (Mooncake's
 * {@code hash_ids}). Implementations are immutable.
 */
public sealed interface ChunkedTrace permits Trace, BlockTrace {
    /** Requests. */
    int size();

    int promptTokens(int request);

    int newTokens(int request);

    /** Whether the requests have arrival times ({@link #time}). */
    boolean timed();

    /** Seconds from the trace's start at which {@code request} arrives; 0 for every request of an untimed trace. */
    double time(int request);

    /** Sum of all prompts' tokens: the denominator of the hit rate. */
    long totalPromptTokens();

    /**
     * The key of chunk {@code k} of {@code request} (counted from the prompt's start; past the prompt's full chunks,
     * the answer's) with chunks of {@code chunkTokens}; defined for the chunks {@link #refusal} allows.
     */
    long chunkKey(int request, int k, int chunkTokens);

    /** Why this trace cannot be replayed with {@code chunks}, naming the flag to change; or {@code null}. */
    String refusal(ChunkOptions chunks);
}
