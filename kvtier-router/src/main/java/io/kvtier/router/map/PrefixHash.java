package io.kvtier.router.map;

/**
 * The map's own block hash: a chain over fixed-size blocks of token ids, so that two prompts get equal hashes for
 * block {@code i} exactly when their first {@code (i + 1) * blockSize} tokens (and their LoRA adapter) are equal,
 * whatever hash algorithm and seed each engine uses for its own blocks. Pure functions.
 *
 * <p>Engines name their blocks with hashes the map cannot recompute (vLLM's are salted by a per-process random seed
 * unless {@code PYTHONHASHSEED} is fixed, and depend on {@code --prefix-caching-hash-algo}); their events carry the
 * block's token ids, from which the map computes this hash once per stored block and keeps the engine's hash only as
 * the name to remove it by. 64 bits, not cryptographic: a collision can only make the router credit a prefix an
 * engine does not hold (a slower request, never wrong output), with odds about {@code n^2 / 2^65} for {@code n}
 * distinct blocks.
 */
public final class PrefixHash {
    /** The hash "before" the first block of a prompt served without a LoRA adapter. */
    public static final long ROOT = 0x6B76_7469_6572_0001L; // "kvtier" + version of this scheme

    private static final long C1 = 0x87C37B91114253D5L;
    private static final long C2 = 0x4CF5AD432745937FL;

    private PrefixHash() {
    }

    /** The root of the chain for prompts served with {@code lora} (a LoRA adapter's name), or {@link #ROOT}. */
    public static long root(String lora) {
        if (lora == null || lora.isEmpty()) {
            return ROOT;
        }
        long h = ROOT;
        for (int i = 0; i < lora.length(); i++) {
            h = round(h, lora.charAt(i));
        }
        return fmix(h ^ lora.length());
    }

    /** The hash of the block {@code tokens[from, to)} that follows a block hashed {@code parent}. */
    public static long next(long parent, int[] tokens, int from, int to) {
        long h = parent ^ (0x9E3779B97F4A7C15L * (to - from + 1));
        for (int i = from; i < to; i++) {
            h = round(h, tokens[i]);
        }
        return fmix(h ^ (to - from));
    }

    /**
     * The hashes of the full blocks of {@code tokens} ({@code tokens.length / blockSize} of them; a partial last block
     * is never cached whole by an engine, so it has no hash).
     */
    public static long[] chain(long root, int[] tokens, int blockSize) {
        if (blockSize <= 0) {
            throw new IllegalArgumentException("block size " + blockSize + " must be positive");
        }
        long[] hashes = new long[tokens.length / blockSize];
        long h = root;
        for (int b = 0; b < hashes.length; b++) {
            h = next(h, tokens, b * blockSize, (b + 1) * blockSize);
            hashes[b] = h;
        }
        return hashes;
    }

    /** A block hash that also covers {@code salt}: what an engine hashed into the block besides its tokens. */
    public static long salted(long hash, long salt) {
        return fmix(round(round(hash, (int) salt), (int) (salt >>> 32)));
    }

    /** 64 bits of {@code bytes}, for {@link #salted}. */
    public static long ofBytes(byte[] bytes) {
        long h = ROOT ^ bytes.length;
        for (byte b : bytes) {
            h = round(h, b & 0xFF);
        }
        return fmix(h);
    }

    private static long round(long h, int value) {
        long k = (value & 0xFFFF_FFFFL) * C1;
        k = Long.rotateLeft(k, 31) * C2;
        h ^= k;
        return Long.rotateLeft(h, 27) * 5 + 0x52DCE729;
    }

    /** MurmurHash3's 64-bit finalizer: every input bit affects every output bit. */
    private static long fmix(long h) {
        h ^= h >>> 33;
        h *= 0xFF51AFD7ED558CCDL;
        h ^= h >>> 33;
        h *= 0xC4CEB9FE1A85EC53L;
        return h ^ (h >>> 33);
    }
}
