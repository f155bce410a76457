package io.kvtier.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.client.cluster.SlotHash;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Property: over many random memberships, no member holds more than 1.1x its weighted share of primaries or of all
 * slot copies, and with few equal members none holds less than 0.9x. Prints the extremes next to
 * those of the anchors left untuned (no load bound).
 */
class PlacementBalanceTest {
    private static final int SLOTS = SlotHash.SLOTS;
    private static final int RUNS = 200;

    /** Extremes of (count / share) seen over a property run. */
    private static final class Extremes {
        double maxPrimary;
        double minPrimary = Double.MAX_VALUE;
        double maxOwned;
        double maxUntunedPrimary;
    }

    @Test
    void holdsEveryEquallyWeightedMemberWithin10PercentOfItsShare() {
        Extremes extremes = run(false);

        assertThat(extremes.minPrimary).isGreaterThanOrEqualTo(0.9);
        print("equal weights", extremes);
    }

    @Test
    void holdsEveryMemberOfRandomWeightWithin10PercentAboveItsShare() {
        print("weights 1..4x", run(true));
    }

    @Test
    void holdsEveryMemberWithinItsShareOfCopiesWhenSlotsNeedMostOfTheMembers() {
        Extremes extremes = new Extremes();
        for (long seed = 0; seed < RUNS; seed++) {
            Random random = new Random(seed);
            int n = 3 + random.nextInt(6);
            List<Member> members = Memberships.randomWeights(random, n);
            check(seed, Placement.compute(seed, members, n - 2 - random.nextInt(2)), extremes, false);
        }
        print("weights 1..4x, replicas N-2 or N-3", extremes);
    }

    private static Extremes run(boolean weighted) {
        Extremes extremes = new Extremes();
        for (long seed = 0; seed < RUNS; seed++) {
            Random random = new Random(seed);
            int n = 2 + random.nextInt(63);
            int replicas = random.nextInt(4);
            List<Member> members = Memberships.members(random, n, weighted);
            SlotTable table = Placement.compute(seed, members, replicas);
            check(seed, table, extremes, !weighted && n <= 16);
            SlotTable plain = Placement.compute(seed, members, 0, Double.POSITIVE_INFINITY);
            for (Member m : members) {
                extremes.maxUntunedPrimary = Math.max(extremes.maxUntunedPrimary,
                        plain.primaryCount(m) / primaryShare(members, m));
            }
        }
        return extremes;
    }

    private static void check(long seed, SlotTable table, Extremes extremes, boolean checkMinimum) {
        List<Member> members = table.members();
        double[] ownedShares = waterFilledShares(members, table.copies());
        for (int i = 0; i < members.size(); i++) {
            Member m = members.get(i);
            double primary = table.primaryCount(m) / primaryShare(members, m);
            double owned = table.ownedCount(m) / ownedShares[i];
            String context = String.format("seed %d, %d members, %d replicas, %s", seed, members.size(),
                    table.replicas(), m);
            assertThat(primary).as("primary load / share, " + context).isLessThanOrEqualTo(1.1);
            assertThat(owned).as("owned load / share, " + context).isLessThanOrEqualTo(1.1);
            if (checkMinimum) {
                assertThat(primary).as("primary load / share, " + context).isGreaterThanOrEqualTo(0.9);
                extremes.minPrimary = Math.min(extremes.minPrimary, primary);
            }
            extremes.maxPrimary = Math.max(extremes.maxPrimary, primary);
            extremes.maxOwned = Math.max(extremes.maxOwned, owned);
        }
    }

    private static double primaryShare(List<Member> members, Member m) {
        return (double) SLOTS * m.weight() / Memberships.totalWeight(members);
    }

    /**
     * Each member's fair number of the {@code SLOTS * copies} copies: by weight, but at most one per slot. Computed
     * here by iterating to the fixed point, independently of Placement's one-pass water-filling.
     */
    static double[] waterFilledShares(List<Member> members, int copies) {
        boolean[] full = new boolean[members.size()];
        double[] shares = new double[members.size()];
        boolean changed = true;
        while (changed) {
            changed = false;
            double weight = 0;
            double left = (double) SLOTS * copies;
            for (int i = 0; i < members.size(); i++) {
                if (full[i]) {
                    left -= SLOTS;
                } else {
                    weight += members.get(i).weight();
                }
            }
            for (int i = 0; i < members.size(); i++) {
                shares[i] = full[i] ? SLOTS : left * members.get(i).weight() / weight;
                if (!full[i] && shares[i] > SLOTS) {
                    full[i] = changed = true;
                }
            }
        }
        return shares;
    }

    private static void print(String variant, Extremes e) {
        String minimum = e.minPrimary == Double.MAX_VALUE ? "" : String.format(", min primary %.3fx (N <= 16)",
                e.minPrimary);
        String plain = e.maxUntunedPrimary == 0 ? "" : String.format("; untuned max primary %.3fx",
                e.maxUntunedPrimary);
        System.out.printf("balance over %d memberships, %s: max primary %.3fx, max owned %.3fx of share%s%s%n", RUNS,
                variant, e.maxPrimary, e.maxOwned, minimum, plain);
    }
}
