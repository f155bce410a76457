package io.kvtier.router.sim;

import it.unimi.dsi.fastutil.ints.IntArrayList;

/**
 * One request inside an emulated engine, as vLLM's scheduler tracks it: its tokens (the prompt, then the answer as it
 * is generated), how many of them have their KV in the GPU ({@code computed}), the blocks holding that KV, and where
 * its prompt's KV came from the first time it was scheduled. Owned by the engine's step thread; the fields the HTTP
 * side reads once the request has finished ({@link #gpuHitTokens}, {@link #externalHitTokens}) are published through
 * {@link Listener#finished}.
 */
final class SimRequest {
    /** Hears a request's progress, on the step thread: quick and non-blocking. */
    interface Listener {
        /** The prompt is computed, {@code cached} of its tokens came from the GPU cache or kvtier; before the first token. */
        void prefilled(int cached);

        /** {@code count} new tokens were generated (the first call is the first token). */
        void tokens(int count);

        /** The request finished (all tokens generated) or was refused ({@code error} non-null). */
        void finished(String error);
    }

    final long id;
    final int[] prompt;
    final int maxTokens;
    final long[] blockHashes;
    final Listener listener;
    final IntArrayList blocks = new IntArrayList();
    int computed;
    int generated;
    int cachedBlocks;
    boolean scheduledOnce;
    int gpuHitTokens;
    int externalHitTokens;
    /** Chunks kvtier holds, from the first (the connector's lookup); -1 before the lookup. */
    int externalChunks = -1;
    /** KV to load from kvtier before this step's compute: chunks [loadFrom, loadTo); loadTo 0 when none. */
    int loadFrom;
    int loadTo;
    long[] chunkHashes;
    int preemptions;

    SimRequest(long id, int[] prompt, int maxTokens, long[] blockHashes, Listener listener) {
        this.id = id;
        this.prompt = prompt;
        this.maxTokens = maxTokens;
        this.blockHashes = blockHashes;
        this.listener = listener;
    }

    /** Tokens so far: the prompt and the answer generated. */
    int tokens() {
        return prompt.length + generated;
    }

    boolean done() {
        return generated >= maxTokens;
    }
}
