package io.kvtier.bench.workload;

import io.kvtier.kvcache.key.LmcacheKey;
import java.nio.charset.StandardCharsets;

/**
 * Keys as LMCache's Redis connector writes them: {@code <model>@<world_size>@<worker_id>@<chunk_hash_hex>} (plus
 * {@code @<dtype>} in newer versions), with the suffix {@code kv_bytes} or {@code metadata} appended directly, no
 * separator. World size 1 and worker 0: one engine, no tensor parallelism. Stateless.
 */
final class LmcacheKeys {
    static final String KV_BYTES = "kv_bytes";
    static final String METADATA = "metadata";
    /** Length of LMCache's serialized {@code RemoteMetadata}: length, 4-int shape, dtype, format. */
    static final int METADATA_BYTES = 28;

    private LmcacheKeys() {
    }

    /** The chunk's key without suffix. */
    static String chunkKey(String model, long chunkHash, String dtype) {
        return LmcacheKey.format(model, 1, 0, Long.toHexString(chunkHash), dtype, LmcacheKey.Part.CHUNK);
    }

    static byte[] withSuffix(String chunkKey, String suffix) {
        return (chunkKey + suffix).getBytes(StandardCharsets.UTF_8);
    }
}
