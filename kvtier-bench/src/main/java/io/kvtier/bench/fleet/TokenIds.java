package io.kvtier.bench.fleet;

/**
 * Token ids for prompts without a tokenizer: id {@code position} of the stream named by {@code (seed, kind, a, b)}
 * is a pure function of those five numbers, in {@code [1000, 30000)}, so two prompts built from the same streams
 * hold the same tokens, and every model's vocabulary (32k and up) has them, clear of the special tokens at the low
 * end. Stateless.
 */
final class TokenIds {
    static final int FIRST = 1000;
    static final int END = 30_000;
    private static final long GOLDEN = 0x9E3779B97F4A7C15L;

    private TokenIds() {
    }

    /** The key of one stream, for {@link #fill}. */
    static long stream(long seed, long kind, long a, long b) {
        return mix(mix(mix(seed + kind * GOLDEN) + a * GOLDEN) + b * GOLDEN);
    }

    /** Writes ids {@code from .. from + count} of {@code stream} to {@code into[at ..]}. */
    static void fill(int[] into, int at, long stream, int from, int count) {
        for (int i = 0; i < count; i++) {
            into[at + i] = token(stream, from + i);
        }
    }

    static int token(long stream, long position) {
        return FIRST + (int) Math.floorMod(mix(stream + position * GOLDEN), (long) (END - FIRST));
    }

    /** SplitMix64's finalizer (the prompts' ids, and ReuseCeiling's block chains). */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
