package io.kvtier.bench.fleet;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * The most prompt tokens any routing and any cache could have reused at a point, computed offline from the requests
 * the point sent: requests in the order they were sent, each finding the longest prefix of whole blocks that an
 * earlier request's prompt holds, as a prefix cache of unlimited size shared by every engine would (the last token is
 * always computed, as vLLM recomputes it; answers' blocks are not reused, as the fleet's engines do not cache them).
 * Every request sent, the warm-up's and failed ones included, adds its blocks; only the measured ones count. No
 * routing policy can pass {@link #share()}; how near one comes is {@link #reached(long)}. Immutable.
 *
 * @param promptTokens   prompt tokens of the measured requests that completed
 * @param reusableTokens of those, the tokens the unlimited shared cache would have held
 */
public record ReuseCeiling(long promptTokens, long reusableTokens) {
    /** A point with no ceiling computed (results written before it existed). */
    public static final ReuseCeiling NONE = new ReuseCeiling(0, 0);

    public ReuseCeiling {
        if (promptTokens < 0 || reusableTokens < 0 || reusableTokens > promptTokens) {
            throw new IllegalArgumentException("reusable tokens " + reusableTokens + " must be within 0.."
                    + promptTokens);
        }
    }

    /**
     * The ceiling of a point: {@code everything} it sent (in any order: sorted here by send time), the measured ones
     * being those that completed and were sent at or after {@code countedFromNanos}; blocks of {@code blockSize}
     * tokens.
     */
    public static ReuseCeiling of(List<RequestResult> everything, long countedFromNanos, int blockSize) {
        Objects.requireNonNull(everything, "everything");
        if (blockSize < 1) {
            throw new IllegalArgumentException("block size " + blockSize + " must be at least 1");
        }
        List<RequestResult> bySend = new ArrayList<>(everything);
        bySend.sort(Comparator.comparingLong(RequestResult::sentNanos));
        Set<Long> held = new HashSet<>();
        long prompt = 0;
        long reusable = 0;
        for (RequestResult r : bySend) {
            int[] tokens = r.request().prompt();
            long[] chain = chain(tokens, blockSize);
            int hit = 0;
            while (hit < chain.length && held.contains(chain[hit])) {
                hit++;
            }
            hit = Math.min(hit, (tokens.length - 1) / blockSize);
            if (r.ok() && r.sentNanos() - countedFromNanos >= 0) {
                prompt += tokens.length;
                reusable += (long) hit * blockSize;
            }
            for (long h : chain) {
                held.add(h);
            }
        }
        return new ReuseCeiling(prompt, reusable);
    }

    /** The hashes of the prompt's whole blocks, each covering every token before it (a prefix cache's chain). */
    static long[] chain(int[] tokens, int blockSize) {
        long[] out = new long[tokens.length / blockSize];
        long h = 0x6a09e667f3bcc908L;
        for (int b = 0; b < out.length; b++) {
            for (int i = b * blockSize; i < (b + 1) * blockSize; i++) {
                h = TokenIds.mix(h ^ (tokens[i] & 0xffffffffL)); // 64-bit chains: no false match to fear
            }
            out[b] = h;
        }
        return out;
    }

    /** The share of prompt tokens the unlimited shared cache would have held; NaN with no prompt tokens. */
    public double share() {
        return promptTokens == 0 ? Double.NaN : (double) reusableTokens / promptTokens;
    }

    /** How much of the ceiling {@code cachedTokens} (what the engines reported cached) reached; NaN with no ceiling. */
    public double reached(long cachedTokens) {
        return reusableTokens == 0 ? Double.NaN : (double) cachedTokens / reusableTokens;
    }
}
