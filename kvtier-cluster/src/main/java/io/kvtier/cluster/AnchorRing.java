package io.kvtier.cluster;

import io.kvtier.client.cluster.SlotHash;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * The members' anchors on the ring of slots and the weighted distances from them that decide every slot's ranking;
 * see {@link Placement}'s design comment. Each member has {@link #ANCHORS} anchors at real positions in [0, 16384)
 * drawn from its id alone; a slot's members rank by (distance from the slot's centre to the member's nearest anchor) /
 * (weight * stretch), smallest first, ties by member index. The stretches start at 1 and {@link #balancePrimaries}
 * tunes them until every member's number of primaries lies within its bounds. Not thread-safe.
 */
final class AnchorRing {
    /** Anchors per member: at most 28 primary ranges per member (52-61 on average for 3 members, 1,600-1,760 for 64). */
    static final int ANCHORS = 24;
    /** Tuning rounds before {@link #balancePrimaries} settles for what it has (not reached in the property tests). */
    private static final int MAX_ROUNDS = 200;
    private static final long GOLDEN_GAMMA = 0x9E3779B97F4A7C15L;
    private static final int SLOTS = SlotHash.SLOTS;

    private final int members;
    /** distance[m][slot]: from the slot's centre to member m's nearest anchor, round the ring. */
    private final double[][] distance;
    /** 1 / (weight * stretch) per member: a slot's rank key is distance times this. */
    private final double[] scale;

    AnchorRing(List<Member> sorted) {
        members = sorted.size();
        distance = new double[members][];
        scale = new double[members];
        for (int m = 0; m < members; m++) {
            scale[m] = 1.0 / sorted.get(m).weight();
            distance[m] = distances(anchors(sorted.get(m).id()));
        }
    }

    /** The member's anchor positions, ascending. */
    private static double[] anchors(String id) {
        long idHash = idHash(id);
        double[] anchors = new double[ANCHORS];
        for (int k = 0; k < ANCHORS; k++) {
            anchors[k] = uniform(mix64(idHash ^ mix64((k + 1) * GOLDEN_GAMMA))) * SLOTS;
        }
        Arrays.sort(anchors);
        return anchors;
    }

    /** For every slot, the distance round the ring from its centre to the nearest of {@code anchors}. */
    private static double[] distances(double[] anchors) {
        double[] distance = new double[SLOTS];
        int next = 0; // the first anchor at or after the slot's centre, anchors.length if none
        for (int slot = 0; slot < SLOTS; slot++) {
            double center = slot + 0.5;
            while (next < anchors.length && anchors[next] < center) {
                next++;
            }
            double after = next < anchors.length ? anchors[next] - center : anchors[0] + SLOTS - center;
            double before = next > 0 ? center - anchors[next - 1] : center + SLOTS - anchors[anchors.length - 1];
            distance[slot] = Math.min(after, before);
        }
        return distance;
    }

    /**
     * Tunes the stretches until every member m is primary of lo[m]..hi[m] slots, and returns each slot's primary. A
     * member's expected share is proportional to weight * stretch, so a round multiplies the stretch of every member
     * outside its bounds by a root of target / load, the target a quarter of the band inside the bound it broke:
     * members within their bounds keep their stretch, so only the excess imbalance is corrected, and the root (square
     * root for 8 rounds, then fourth, ... down to a 64th) damps the see-saw of two neighbours correcting each other.
     */
    int[] balancePrimaries(int[] lo, int[] hi) {
        int[] primary = new int[SLOTS];
        int[] load = new int[members];
        for (int round = 0; round < MAX_ROUNDS; round++) {
            Arrays.fill(load, 0);
            for (int slot = 0; slot < SLOTS; slot++) {
                primary[slot] = best(slot);
                load[primary[slot]]++;
            }
            if (round == MAX_ROUNDS - 1 || withinBounds(load, lo, hi)) {
                break;
            }
            for (int m = 0; m < members; m++) {
                if (load[m] < lo[m] || load[m] > hi[m]) {
                    int margin = (hi[m] - lo[m]) / 4;
                    double target = load[m] < lo[m] ? lo[m] + margin : hi[m] - margin;
                    double step = target / Math.max(load[m], 0.5);
                    for (int halving = 0; halving <= Math.min(round / 8, 5); halving++) {
                        step = Math.sqrt(step);
                    }
                    scale[m] /= step;
                }
            }
        }
        return primary;
    }

    private static boolean withinBounds(int[] load, int[] lo, int[] hi) {
        for (int m = 0; m < load.length; m++) {
            if (load[m] < lo[m] || load[m] > hi[m]) {
                return false;
            }
        }
        return true;
    }

    /** The member with the smallest rank key for {@code slot}. */
    private int best(int slot) {
        int best = 0;
        double bestKey = distance[0][slot] * scale[0];
        for (int m = 1; m < members; m++) {
            double key = distance[m][slot] * scale[m];
            if (key < bestKey) {
                best = m;
                bestKey = key;
            }
        }
        return best;
    }

    /** A ranking of all members slot by slot, under the stretches as they are; see {@link Ranking}. */
    Ranking ranking() {
        return new Ranking();
    }

    /** The members ranked for one slot by their rank key, smallest first, selected lazily. Reused slot after slot. */
    final class Ranking {
        private final double[] keys = new double[members];
        private final boolean[] ranked = new boolean[members];
        private final int[] order = new int[members];
        private int rankedCount;

        /** Computes every member's key for {@code slot} and forgets the previous slot's ranking. */
        void rank(int slot) {
            for (int m = 0; m < members; m++) {
                keys[m] = distance[m][slot] * scale[m];
            }
            Arrays.fill(ranked, false);
            rankedCount = 0;
        }

        /** The member index at {@code position} (0 first) of the current slot's ranking. */
        int at(int position) {
            while (rankedCount <= position) {
                int best = -1;
                for (int m = 0; m < members; m++) {
                    if (!ranked[m] && (best < 0 || keys[m] < keys[best])) {
                        best = m;
                    }
                }
                ranked[best] = true;
                order[rankedCount++] = best;
            }
            return order[position];
        }

        int size() {
            return members;
        }
    }

    /** Maps 52 hash bits to the open interval (0, 1). */
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
