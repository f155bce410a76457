package io.kvtier.router.map;

import io.kvtier.kvcache.key.LmcacheChunkKeys;
import java.util.List;

/**
 * How the engines' LMCache names chunks, so that the router can compute a prompt's chunk keys: its {@code chunk_size},
 * {@code pre_caching_hash_algorithm}, NONE_HASH (from its start-up log; by default the value for PYTHONHASHSEED=0),
 * KV dtype, tensor-parallel world size, and the model name it keys by ({@code null}: the request's model). The router
 * asks for worker 0's keys: every rank stores its own, and rank 0's stand for the chunk.
 */
public record LmcacheSettings(String model, int worldSize, String dtype, int chunkSize,
        LmcacheChunkKeys.Algorithm algorithm, long noneHash) {
    public static final int DEFAULT_CHUNK = 256;

    public static LmcacheSettings defaults() {
        return new LmcacheSettings(null, 1, "bfloat16", DEFAULT_CHUNK, LmcacheChunkKeys.Algorithm.BUILTIN,
                LmcacheChunkKeys.Algorithm.BUILTIN.seedZeroNoneHash());
    }

    /** The chunk keys (no redis:// suffix) of {@code tokens}' full chunks for a request to {@code requestModel}. */
    public List<String> keys(String requestModel, int[] tokens) {
        return new LmcacheChunkKeys(model == null ? requestModel : model, worldSize, 0, dtype, chunkSize, algorithm,
                noneHash).keys(tokens);
    }
}
