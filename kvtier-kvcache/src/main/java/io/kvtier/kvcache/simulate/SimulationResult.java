package io.kvtier.kvcache.simulate;

/**
 * What one budget did with the whole trace. Hit rate = prompt tokens served from the store / all prompt tokens;
 * a token is served from memory or from disk according to where its chunk was when read. Chunk hit rate = chunks
 * read / chunks looked up, the full chunks of all prompts (for a {@link BlockTrace}: hit blocks / full blocks).
 * Bytes are values' bytes (KV data), without record headers or keys. Immutable.
 *
 * @param writtenBytes     chunks stored (SET), into memory or (too large for it) straight to disk
 * @param diskWrittenBytes values written to the disk log: demotions of values not yet on disk, and direct writes
 * @param evictedBytes     values lost: their region was evicted (or, with no disk, they left memory)
 * @param hitChunks        chunks read, from either tier: the hit tokens in chunks
 * @param lookedUpChunks   every prompt's full chunks: those after a request's first miss count as missed
 * @param allChunks        every prompt's chunks, a partial last one too: the blocks of a Mooncake trace's hash_ids
 * @param policy           the memory tier's eviction order
 */
public record SimulationResult(Budget budget, long requests, long promptTokens, long memoryHitTokens,
                               long diskHitTokens, long memoryReadBytes, long diskReadBytes, long writtenBytes,
                               long diskWrittenBytes, long evictedBytes, long promotions, long evictedRegions,
                               long hitChunks, long lookedUpChunks, long allChunks, Policy policy,
                               long admissionDroppedBytes) {
    public long hitTokens() {
        return memoryHitTokens + diskHitTokens;
    }

    public double hitRate() {
        return ratio(hitTokens());
    }

    public double memoryHitRate() {
        return ratio(memoryHitTokens);
    }

    public double diskHitRate() {
        return ratio(diskHitTokens);
    }

    public double chunkHitRate() {
        return lookedUpChunks == 0 ? 0 : (double) hitChunks / lookedUpChunks;
    }

    /** Hit chunks / all chunks, partial last ones too: how Mooncake and Dynamo count a trace's block hit rate. */
    public double allChunkHitRate() {
        return allChunks == 0 ? 0 : (double) hitChunks / allChunks;
    }

    private double ratio(long tokens) {
        return promptTokens == 0 ? 0 : (double) tokens / promptTokens;
    }
}
