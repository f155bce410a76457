package io.kvtier.kvcache.key;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The keys LMCache writes for a prompt's token ids (its {@code ChunkedTokenDatabase} and
 * {@code CacheEngineKey.to_string()}), so that a router can ask a store which of a prompt's chunks it holds without
 * LMCache. Tokens are cut from position 0 into chunks of {@code chunkSize}; only full chunks get keys (LMCache's
 * {@code save_unfull_chunk: false}, its current default: a partial chunk's key changes as the prompt grows). Each chunk's
 * hash chains over the prefix: {@code h_i = H((h_{i-1}, tuple(chunk_i), ()))}, {@code h_-1 = NONE_HASH}. Key:
 * {@code model@worldSize@worker@hex(h_i)@dtype} (redis:// adds {@code kv_bytes} / {@code metadata}).
 *
 * <p>Two hash functions ({@code pre_caching_hash_algorithm}):
 * <ul>
 *   <li>{@link Algorithm#BUILTIN} (LMCache's default): CPython's own {@code hash()} of that tuple, which for ints and
 *       tuples of ints is the same on every 64-bit CPython since 3.8 and does not depend on PYTHONHASHSEED;
 *       {@code hex} is Python's {@code f"{h:x}"} (sign and magnitude).</li>
 *   <li>{@link Algorithm#SHA256_CBOR}: SHA-256 of the tuple's canonical CBOR, first 8 bytes big-endian (LMCache's
 *       folding of digests to ints); {@code hex} unsigned.</li>
 * </ul>
 * NONE_HASH is what LMCache logs at start ({@code Initialized NONE_HASH=...}): vLLM's {@code hash_fn(PYTHONHASHSEED)}.
 * With PYTHONHASHSEED unset it is random per process and no outsider can compute keys. Checked against vectors made by
 * the interpreter's own {@code hash()} (src/test/python/lmcache_key_vectors.py).
 */
public final class LmcacheChunkKeys {
    /** LMCache's {@code pre_caching_hash_algorithm}. */
    public enum Algorithm {
        BUILTIN, SHA256_CBOR;

        /** {@code builtin} or {@code sha256_cbor}. */
        public static Algorithm parse(String name) {
            return switch (name.trim().toLowerCase(Locale.ROOT)) {
                case "builtin" -> BUILTIN;
                case "sha256_cbor" -> SHA256_CBOR;
                default -> throw new IllegalArgumentException("LMCache hash '" + name + "': builtin or sha256_cbor");
            };
        }

        /** NONE_HASH under {@code PYTHONHASHSEED=0} (CPython 3.11 and later for builtin: SipHash-1-3 of "0"). */
        public long seedZeroNoneHash() {
            return this == BUILTIN ? 5313149338359954478L : 5625442194607170974L;
        }
    }

    /** CPython's hash modulus, 2^61 - 1. */
    private static final long MODULUS = (1L << 61) - 1;
    private static final long XX_P1 = 0x9E3779B185EBCA87L;
    private static final long XX_P2 = 0xC2B2AE3D27D4EB4FL;
    private static final long XX_P5 = 0x27D4EB2F165667C5L;
    /** {@code hash(())}. */
    static final long EMPTY_TUPLE_HASH = tupleHash(new long[0], 0);

    private final String model;
    private final int worldSize;
    private final int worker;
    private final String dtype;
    private final int chunkSize;
    private final Algorithm algorithm;
    private final long noneHash;

    public LmcacheChunkKeys(String model, int worldSize, int worker, String dtype, int chunkSize, Algorithm algorithm,
            long noneHash) {
        if (chunkSize < 1) {
            throw new IllegalArgumentException("LMCache chunk size " + chunkSize + " must be at least 1");
        }
        LmcacheKey.format(model, worldSize, worker, "0", dtype, LmcacheKey.Part.CHUNK); // validates the parts
        this.model = model;
        this.worldSize = worldSize;
        this.worker = worker;
        this.dtype = dtype;
        this.chunkSize = chunkSize;
        this.algorithm = algorithm;
        this.noneHash = noneHash;
    }

    public int chunkSize() {
        return chunkSize;
    }

    /** The chain hashes of {@code tokens}' full chunks, in order. */
    public long[] hashes(int[] tokens) {
        int n = tokens.length / chunkSize;
        long[] out = new long[n];
        long prefix = noneHash;
        long[] lanes = new long[chunkSize];
        for (int c = 0; c < n; c++) {
            if (algorithm == Algorithm.BUILTIN) {
                for (int i = 0; i < chunkSize; i++) {
                    lanes[i] = intHash(tokens[c * chunkSize + i]);
                }
                long chunk = tupleHash(lanes, chunkSize);
                prefix = tupleHash(new long[] {intHash(prefix), chunk, EMPTY_TUPLE_HASH}, 3);
            } else {
                prefix = sha256Cbor(prefix, tokens, c * chunkSize, chunkSize);
            }
            out[c] = prefix;
        }
        return out;
    }

    /** The keys (without a redis:// suffix) of {@code tokens}' full chunks, in order. */
    public List<String> keys(int[] tokens) {
        long[] hashes = hashes(tokens);
        List<String> out = new ArrayList<>(hashes.length);
        for (long h : hashes) {
            out.add(key(h));
        }
        return out;
    }

    /** The key (without a redis:// suffix) of the chunk whose chain hash is {@code hash}. */
    public String key(long hash) {
        return LmcacheKey.format(model, worldSize, worker, hex(hash), dtype, LmcacheKey.Part.CHUNK);
    }

    /** {@code f"{h:x}"} of the chain value: signed for builtin (Py_hash_t), unsigned for the folded digest. */
    String hex(long h) {
        if (algorithm == Algorithm.SHA256_CBOR) {
            return Long.toUnsignedString(h, 16);
        }
        return h < 0 ? "-" + Long.toUnsignedString(-h, 16) : Long.toHexString(h);
    }

    /** CPython's {@code hash(int)} for a signed 64-bit value: sign * (|v| mod 2^61-1), -1 becoming -2. */
    static long intHash(long v) {
        long a = v == Long.MIN_VALUE ? 4 : Math.abs(v) % MODULUS; // 2^63 = 4 (mod 2^61-1)
        long h = v < 0 ? -a : a;
        return h == -1 ? -2 : h;
    }

    /** CPython's (3.8+) {@code tuplehash} over the first {@code n} item hashes. */
    static long tupleHash(long[] items, int n) {
        long acc = XX_P5;
        for (int i = 0; i < n; i++) {
            acc += items[i] * XX_P2;
            acc = Long.rotateLeft(acc, 31);
            acc *= XX_P1;
        }
        acc += n ^ (XX_P5 ^ 3527539L);
        return acc == -1 ? 1546275796L : acc;
    }

    /** First 8 bytes of sha256(cbor((prefix, tuple(tokens[from:from+n]), ()))), big-endian; prefix unsigned. */
    private static long sha256Cbor(long prefix, int[] tokens, int from, int n) {
        MessageDigest sha;
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(16 + n * 5);
        head(out, 4, 3);
        head(out, 0, prefix);
        head(out, 4, n);
        for (int i = 0; i < n; i++) {
            int t = tokens[from + i];
            if (t >= 0) {
                head(out, 0, t);
            } else {
                head(out, 1, -1L - t);
            }
        }
        head(out, 4, 0);
        byte[] d = sha.digest(out.toByteArray());
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = v << 8 | (d[i] & 0xff);
        }
        return v;
    }

    /** A canonical CBOR head: major type and its argument, unsigned, in the fewest bytes. */
    private static void head(java.io.ByteArrayOutputStream out, int major, long arg) {
        int m = major << 5;
        if (Long.compareUnsigned(arg, 24) < 0) {
            out.write(m | (int) arg);
        } else if (Long.compareUnsigned(arg, 1L << 8) < 0) {
            out.write(m | 24);
            out.write((int) arg);
        } else if (Long.compareUnsigned(arg, 1L << 16) < 0) {
            out.write(m | 25);
            out.write((int) (arg >>> 8));
            out.write((int) arg);
        } else if (Long.compareUnsigned(arg, 1L << 32) < 0) {
            out.write(m | 26);
            for (int s = 24; s >= 0; s -= 8) {
                out.write((int) (arg >>> s));
            }
        } else {
            out.write(m | 27);
            for (int s = 56; s >= 0; s -= 8) {
                out.write((int) (arg >>> s));
            }
        }
    }
}
