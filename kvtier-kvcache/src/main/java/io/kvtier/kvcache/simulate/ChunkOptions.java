package io.kvtier.kvcache.simulate;

import io.kvtier.store.StoreOptions;

/**
 * How LMCache turns tokens into stored values: chunks of {@code chunkTokens} tokens (its {@code chunk_size}), each
 * {@code chunkTokens x bytesPerToken} bytes; only full chunks are stored ({@code save_unfull_chunk: false}, LMCache's
 * default); with {@code saveDecode} the generated tokens are stored too ({@code save_decode_cache}, default false).
 * Validated on construction.
 */
public record ChunkOptions(int chunkTokens, long bytesPerToken, boolean saveDecode) {
    /** Llama-3.1-8B in bf16: 32 layers x 8 KV heads x 128 dims x 2 (K and V) x 2 bytes. */
    public static final long LLAMA_8B_BF16_BYTES_PER_TOKEN = 131_072;
    public static final int LMCACHE_CHUNK_TOKENS = 256;

    public ChunkOptions {
        if (chunkTokens < 1) {
            throw new IllegalArgumentException("--chunk-tokens " + chunkTokens + " must be at least 1");
        }
        if (bytesPerToken < 1) {
            throw new IllegalArgumentException("--bytes-per-token " + bytesPerToken + " must be at least 1");
        }
        if (bytesPerToken > StoreOptions.MAX_VALUE / chunkTokens) {
            throw new IllegalArgumentException("a chunk of " + chunkTokens + " tokens x " + bytesPerToken
                    + " bytes exceeds the largest value the store takes (" + StoreOptions.MAX_VALUE + " bytes)");
        }
    }

    /** LMCache's defaults with Llama-3.1-8B bf16: 256-token chunks of 32 MiB, prompts only. */
    public static ChunkOptions defaults() {
        return new ChunkOptions(LMCACHE_CHUNK_TOKENS, LLAMA_8B_BF16_BYTES_PER_TOKEN, false);
    }

    /** Bytes of one chunk's KV cache, the value LMCache stores under the chunk's key. */
    public long chunkBytes() {
        return chunkTokens * bytesPerToken;
    }
}
