package io.kvtier.it;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * LMCache's key strings and chunk sizes as its connectors form them, for Llama-3.1-8B-Instruct in bf16 (sources:
 * docs/lmcache.md, "Keys and values"). Chunk contents come from {@link Payloads}, so a chunk read back can be
 * checked without keeping a copy.
 */
final class LmcacheKeys {
    static final String MODEL = "meta-llama/Llama-3.1-8B-Instruct";
    /** 32 layers x 8 KV heads x 128 dims x 2 (K and V) x 2 bytes (bf16). */
    static final int BYTES_PER_TOKEN = 32 * 8 * 128 * 2 * 2;
    static final int CHUNK_TOKENS = 256;
    /** One full chunk of one worker at tensor parallelism 1: 33,554,432 bytes (32 MiB). */
    static final int CHUNK_BYTES = BYTES_PER_TOKEN * CHUNK_TOKENS;

    private LmcacheKeys() {
    }

    /**
     * CacheEngineKey.to_string() (lmcache/utils.py, commit 0353be82): model, world size, worker id, chunk hash in
     * lower-case hex without padding, dtype; "@" between them.
     */
    static String engineKey(int worldSize, int workerId, long chunkHash) {
        return MODEL + "@" + worldSize + "@" + workerId + "@" + Long.toHexString(chunkHash) + "@bfloat16";
    }

    /**
     * The multiprocess mode's ObjectKey as the native L2 adapter writes it (_object_key_to_string in
     * lmcache/v1/distributed/l2_adapters/native_connector_l2_adapter.py, commit 0b43a455): model, KV rank as 8 hex
     * digits, object group id in hex, the chunk hash's bytes in hex.
     */
    static String mpKey(int kvRank, int objectGroupId, byte[] chunkHash) {
        return MODEL + "@" + String.format("%08x", kvRank) + "@" + Integer.toHexString(objectGroupId) + "@"
                + HexFormat.of().formatHex(chunkHash);
    }

    /** A chunk hash as vLLM's prefix hashing would give one: 64 bits, different for every (seed, index). */
    static long chunkHash(String seed, int index) {
        byte[] d = sha256((seed + ":" + index).getBytes(StandardCharsets.UTF_8));
        long h = 0;
        for (int i = 0; i < 8; i++) {
            h = h << 8 | (d[i] & 0xff);
        }
        return h;
    }

    /** A 32-byte chunk hash (the multiprocess mode's bytes hashes). */
    static byte[] chunkHashBytes(String seed, int index) {
        return sha256((seed + ":" + index).getBytes(StandardCharsets.UTF_8));
    }

    static byte[] sha256(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
