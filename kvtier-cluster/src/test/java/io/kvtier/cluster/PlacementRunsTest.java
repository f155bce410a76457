package io.kvtier.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.client.cluster.SlotHash;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Property: slots come in few ranges (runs of consecutive slots with the same primary, as CLUSTER SLOTS lists them),
 * at most 32 per member, so 3 members stay far below the 170 ranges that fill a 16 KB CLUSTER SLOTS reply and 64
 * members below 2048, while the tuning still brings every member's primaries within 0.95..1.05 of its share. Prints
 * the ranges for some cluster sizes, also of whole owner lists.
 */
class PlacementRunsTest {
    private static final int RUNS = 200;
    private static final int RANGES_PER_MEMBER = 32;

    @Test
    void keepsPrimaryRangesWithin32PerMemberAndPrimariesWithinTheLoadBound() {
        int worst = 0;
        for (long seed = 0; seed < RUNS; seed++) {
            Random random = new Random(seed);
            int n = 1 + random.nextInt(64);
            SlotTable table = Placement.compute(seed, Memberships.members(random, n, random.nextBoolean()),
                    random.nextInt(4));
            int ranges = table.primaryRanges().size();

            assertThat(ranges).as("seed %d, %d members", seed, n).isLessThanOrEqualTo(RANGES_PER_MEMBER * n);
            for (Member m : table.members()) { // the tuning reached the bounds: 0.95..1.05 of the share, rounded out
                double share = (double) SlotHash.SLOTS * m.weight() / Memberships.totalWeight(table.members());
                assertThat(table.primaryCount(m)).as("seed %d, %s", seed, m)
                        .isBetween((int) Math.floor(0.95 * share), (int) Math.ceil(1.05 * share));
            }
            worst = Math.max(worst, ranges / n);
        }
        System.out.printf("ranges over %d memberships of 1..64 members: at most %d primary ranges per member%n", RUNS,
                worst);
    }

    @Test
    void keepsClustersOfSomeSizesInFewRanges() {
        for (int n : new int[] {2, 3, 5, 8, 16, 64}) {
            for (boolean weighted : new boolean[] {false, true}) {
                int maxPrimary = 0;
                long sumPrimary = 0;
                int maxOwners1 = 0;
                int maxOwners2 = 0;
                for (long seed = 0; seed < 20; seed++) {
                    List<Member> members = Memberships.members(new Random(seed), n, weighted);
                    SlotTable table = Placement.compute(seed, members, 1);
                    int primary = table.primaryRanges().size();
                    maxPrimary = Math.max(maxPrimary, primary);
                    sumPrimary += primary;
                    maxOwners1 = Math.max(maxOwners1, table.ranges().size());
                    maxOwners2 = Math.max(maxOwners2, Placement.compute(seed, members, 2).ranges().size());

                    assertThat(primary).as("seed %d, %d members", seed, n).isLessThanOrEqualTo(RANGES_PER_MEMBER * n);
                }
                System.out.printf("ranges of %d members, %s: primary ranges mean %.0f, max %d; owner-list ranges max"
                        + " %d with 1 replica, %d with 2%n", n, weighted ? "weights 1..4x" : "equal weights",
                        sumPrimary / 20.0, maxPrimary, maxOwners1, maxOwners2);
            }
        }
    }
}
