package io.kvtier.cluster;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * The members ranked for one slot by their weighted rendezvous score {@code weight / -ln(u)}, highest first, sorted
 * lazily: {@link #at(int)} selects only as far down the ranking as the caller asks. Equal scores rank by member
 * index. Reused slot after slot; not thread-safe.
 */
final class SlotRanking {
    private static final long GOLDEN_GAMMA = 0x9E3779B97F4A7C15L;

    private final long[] idHashes;
    private final double[] weights;
    private final double[] scores;
    private final boolean[] ranked;
    private final int[] order;
    private int rankedCount;

    SlotRanking(List<Member> members) {
        int n = members.size();
        idHashes = new long[n];
        weights = new double[n];
        for (int i = 0; i < n; i++) {
            idHashes[i] = idHash(members.get(i).id());
            weights[i] = members.get(i).weight();
        }
        scores = new double[n];
        ranked = new boolean[n];
        order = new int[n];
    }

    /** Scores every member for {@code slot} and forgets the previous slot's ranking. */
    void rank(int slot) {
        long slotSeed = mix64((slot + 1) * GOLDEN_GAMMA);
        for (int i = 0; i < scores.length; i++) {
            scores[i] = weights[i] / -StrictMath.log(uniform(mix64(idHashes[i] ^ slotSeed)));
        }
        Arrays.fill(ranked, false);
        rankedCount = 0;
    }

    /** The index of the member at {@code position} (0 = highest score) of the current slot's ranking. */
    int at(int position) {
        while (rankedCount <= position) {
            order[rankedCount++] = extractBest();
        }
        return order[position];
    }

    int size() {
        return scores.length;
    }

    private int extractBest() {
        int best = -1;
        for (int i = 0; i < scores.length; i++) {
            if (!ranked[i] && (best < 0 || scores[i] > scores[best])) {
                best = i;
            }
        }
        ranked[best] = true;
        return best;
    }

    /** Maps 52 hash bits to the open interval (0, 1): both ends excluded, so {@code -ln(u)} is finite and positive. */
    static double uniform(long hash) {
        return ((hash >>> 12) + 0.5) * 0x1.0p-52;
    }

    /** A stable 64-bit hash of an id: FNV-1a over its UTF-8 bytes, then mixed (FNV spreads the last bytes poorly). */
    static long idHash(String id) {
        long h = 0xCBF29CE484222325L;
        for (byte b : id.getBytes(StandardCharsets.UTF_8)) {
            h = (h ^ (b & 0xFF)) * 0x100000001B3L;
        }
        return mix64(h);
    }

    /** SplitMix64's finalizer (Stafford's Mix13): a bijection on 64-bit values with full avalanche. */
    static long mix64(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
