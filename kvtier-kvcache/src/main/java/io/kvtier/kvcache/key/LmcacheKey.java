package io.kvtier.kvcache.key;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * An LMCache key recognized from its bytes. Three shapes (LMCache {@code CacheEngineKey.to_string()} and its
 * connectors):
 * <ul>
 *   <li>engine keys {@code model@world_size@worker_id@chunk_hash[@dtype[@tag%value...]]}, also in the older order
 *       {@code fmt@model@world_size@worker_id@chunk_hash};</li>
 *   <li>the same followed directly (no separator) by {@code kv_bytes} or {@code metadata}: the two halves of one
 *       chunk that LMCache's {@code redis://} and {@code redis-cluster://} connectors write;</li>
 *   <li>multiprocess-mode keys {@code model@rank@chunk_hash}.</li>
 * </ul>
 * A key with neither suffix holds a whole chunk (the native {@code resp://} connector, multiprocess mode).
 */
public record LmcacheKey(String model, int worker, String chunkHash, Part part) {
    /** Which part of a chunk a key holds. */
    public enum Part {
        /** The KV tensors of a chunk, next to a {@link #METADATA} key. */
        KV_BYTES("kv_bytes"),
        /** Shape, dtype and length of a chunk's {@link #KV_BYTES}. */
        METADATA("metadata"),
        /** A whole chunk in one value. */
        CHUNK("");

        private final byte[] suffix;

        Part(String suffix) {
            this.suffix = suffix.getBytes(StandardCharsets.US_ASCII);
        }
    }

    /** Keys longer than this are not looked at: LMCache's are a model name and a few numbers. */
    static final int MAX_LENGTH = 1024;

    /** The key {@code key} parses as, or null if it is not an LMCache key. Allocates only for a match. */
    public static LmcacheKey parse(byte[] key) {
        if (key.length < 5 || key.length > MAX_LENGTH) {
            return null;
        }
        Part part = endsWith(key, Part.KV_BYTES.suffix) ? Part.KV_BYTES
                : endsWith(key, Part.METADATA.suffix) ? Part.METADATA : Part.CHUNK;
        int end = key.length - part.suffix.length;
        int[] at = new int[6];
        int n = 0;
        for (int i = 0; i < end && n < at.length; i++) {
            if (key[i] == '@') {
                at[n++] = i;
            }
        }
        if (n == 2 && part == Part.CHUNK && isNumber(key, at[0] + 1, at[1]) && at[0] > 0 && at[1] + 1 < end) {
            return new LmcacheKey(text(key, 0, at[0]), (int) number(key, at[0] + 1, at[1]),
                    text(key, at[1] + 1, end), part); // model@rank@hash
        }
        if (n >= 3 && at[0] > 0 && isNumber(key, at[0] + 1, at[1]) && isNumber(key, at[1] + 1, at[2])) {
            int hashEnd = n >= 4 ? at[3] : end;
            if (hashEnd > at[2] + 1) {
                return new LmcacheKey(text(key, 0, at[0]), (int) number(key, at[1] + 1, at[2]),
                        text(key, at[2] + 1, hashEnd), part);
            }
        }
        if (n >= 4 && at[1] > at[0] + 1 && isNumber(key, at[1] + 1, at[2]) && isNumber(key, at[2] + 1, at[3])) {
            int hashEnd = n >= 5 ? at[4] : end; // fmt@model@world_size@worker_id@hash
            if (hashEnd > at[3] + 1) {
                return new LmcacheKey(text(key, at[0] + 1, at[1]), (int) number(key, at[2] + 1, at[3]),
                        text(key, at[3] + 1, hashEnd), part);
            }
        }
        return null;
    }

    /**
     * An engine key as LMCache writes it, the inverse of {@link #parse}: {@code model@world_size@worker_id@chunk_hash}
     * then {@code @dtype} unless {@code dtype} is empty, then {@code part}'s suffix, directly (kv_bytes, metadata, or
     * nothing for a whole chunk).
     *
     * @throws IllegalArgumentException if {@code model} or {@code chunkHash} is empty or holds '@', or a number is
     *     negative
     */
    public static String format(String model, int worldSize, int worker, String chunkHash, String dtype, Part part) {
        if (model.isEmpty() || model.indexOf('@') >= 0 || chunkHash.isEmpty() || chunkHash.indexOf('@') >= 0
                || dtype.indexOf('@') >= 0 || worldSize < 0 || worker < 0) {
            throw new IllegalArgumentException("not an LMCache key: model '" + model + "', world size " + worldSize
                    + ", worker " + worker + ", chunk hash '" + chunkHash + "', dtype '" + dtype + "'");
        }
        String key = model + "@" + worldSize + "@" + worker + "@" + chunkHash;
        return (dtype.isEmpty() ? key : key + "@" + dtype) + new String(part.suffix, StandardCharsets.US_ASCII);
    }

    /**
     * The other half of {@code key}'s chunk: its metadata key for a kv_bytes key and the reverse; null for a whole
     * chunk or a key that is no LMCache key.
     */
    public static byte[] companion(byte[] key) {
        Part from = endsWith(key, Part.KV_BYTES.suffix) ? Part.KV_BYTES
                : endsWith(key, Part.METADATA.suffix) ? Part.METADATA : null;
        if (from == null || parse(key) == null) {
            return null;
        }
        byte[] to = from == Part.KV_BYTES ? Part.METADATA.suffix : Part.KV_BYTES.suffix;
        byte[] out = Arrays.copyOf(key, key.length - from.suffix.length + to.length);
        System.arraycopy(to, 0, out, key.length - from.suffix.length, to.length);
        return out;
    }

    /** Whether this key holds chunk data (kv_bytes or a whole chunk), not only its description. */
    public boolean holdsData() {
        return part != Part.METADATA;
    }

    /**
     * Whether {@code key} is an LMCache key holding a KV-cache chunk's data, whole or its kv_bytes half (the metadata
     * half lives and dies with it): the keys store events publish and the router's store map follows.
     */
    public static boolean holdsChunkData(byte[] key) {
        LmcacheKey k = parse(key);
        return k != null && k.holdsData();
    }

    private static boolean endsWith(byte[] key, byte[] suffix) {
        if (key.length < suffix.length + 1) {
            return false;
        }
        return Arrays.equals(key, key.length - suffix.length, key.length, suffix, 0, suffix.length);
    }

    private static boolean isNumber(byte[] b, int from, int to) {
        if (to <= from || to - from > 9) {
            return false;
        }
        for (int i = from; i < to; i++) {
            if (b[i] < '0' || b[i] > '9') {
                return false;
            }
        }
        return true;
    }

    private static long number(byte[] b, int from, int to) {
        long v = 0;
        for (int i = from; i < to; i++) {
            v = v * 10 + (b[i] - '0');
        }
        return v;
    }

    private static String text(byte[] b, int from, int to) {
        return new String(b, from, to - from, StandardCharsets.UTF_8);
    }
}
