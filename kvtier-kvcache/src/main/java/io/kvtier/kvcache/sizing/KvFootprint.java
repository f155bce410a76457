package io.kvtier.kvcache.sizing;

/**
 * The KV-cache bytes of one model at one KV dtype ({@code elementBytes} per element) under tensor parallelism
 * {@code tp}: per token, per LMCache chunk and per sequence, for the whole model and for one GPU (worker).
 *
 * <p>Per token, every layer keeps K and V for its KV heads (MLA: one latent vector). A sliding-window layer keeps at
 * most {@code window} tokens, so a sequence's bytes grow linearly only in its full-attention layers; whether the
 * engine frees the out-of-window blocks is the engine's choice ({@code windowed}). LMCache stores every layer of every
 * token of a chunk (its KV shape is {@code [layers, 2 or 1 for MLA, chunk, kv_heads per worker, head_dim]}), one chunk
 * per worker, except for MLA, whose latent is the same on every worker and is stored once. Immutable.
 */
public record KvFootprint(Attention attention, int elementBytes, int tp) {
    public KvFootprint {
        if (tp < 1) {
            throw new IllegalArgumentException("--tp " + tp + " is below the minimum 1");
        }
        attention.checkTensorParallel(tp);
    }

    public static KvFootprint of(ModelSpec model, Precision kvDtype, int tp) {
        return new KvFootprint(model.attention(), kvDtype.kvBytes(), tp);
    }

    /** Bytes one layer keeps per token on one worker. */
    public long layerBytesPerToken() {
        return attention.elementsPerTokenPerLayer(tp) * elementBytes;
    }

    /** Bytes per token of the whole model, every layer, each KV head counted once (independent of tp). */
    public long bytesPerToken() {
        return attention.layers() * attention.elementsPerTokenPerLayer(1) * elementBytes;
    }

    /** Bytes per token held by one GPU, every layer: its share of the heads, or the whole MLA latent. */
    public long workerBytesPerToken() {
        return attention.layers() * layerBytesPerToken();
    }

    /** Workers that store each chunk in LMCache: every worker, except for MLA (rank 0 only). */
    public int storingWorkers() {
        return attention.isMla() ? 1 : tp;
    }

    /** Bytes per token stored in LMCache's backend, all storing workers together. */
    public long storedBytesPerToken() {
        return workerBytesPerToken() * storingWorkers();
    }

    /** One LMCache chunk of {@code chunkTokens} tokens from one worker: the size of one stored value. */
    public long chunkBytes(int chunkTokens) {
        return workerBytesPerToken() * chunkTokens;
    }

    /**
     * Bytes one GPU holds for a sequence of {@code tokens}: linear in every layer when not {@code windowed} (vLLM with
     * its hybrid allocator off, as with LMCacheConnectorV1), else sliding-window layers capped at the window.
     */
    public long workerSequenceBytes(long tokens, boolean windowed) {
        long slidingTokens = windowed ? Math.min(tokens, attention.slidingWindow()) : tokens;
        return layerBytesPerToken() * (attention.fullLayers() * tokens + attention.slidingLayers() * slidingTokens);
    }

    /** Whole-model bytes per token averaged over a sequence of {@code tokens} with sliding windows capped. */
    public double averageBytesPerToken(long tokens) {
        long perLayer = attention.elementsPerTokenPerLayer(1) * elementBytes;
        long slidingTokens = Math.min(tokens, attention.slidingWindow());
        return (double) perLayer * (attention.fullLayers() * tokens + attention.slidingLayers() * slidingTokens)
                / tokens;
    }
}
