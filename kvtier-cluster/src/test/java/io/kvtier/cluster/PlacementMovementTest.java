package io.kvtier.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.client.cluster.SlotHash;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Property: a join moves little more than the newcomer's weighted share of primaries, and a leave little more than
 * the leaver's own primaries (at most 5% of the slots more). Prints the largest movement and the largest excess.
 */
class PlacementMovementTest {
    private static final int SLOTS = SlotHash.SLOTS;
    private static final int RUNS = 200;
    private static final double SLACK = 0.05;

    /** The largest fraction of primaries moved, and the largest excess over the unavoidable minimum. */
    private static final class Extremes {
        double maxJoinMoved;
        double maxJoinExcess;
        double maxLeaveMoved;
        double maxLeaveExcess;
    }

    @Test
    void movesLittleMoreThanTheNecessaryPrimariesWhenEquallyWeightedMembersJoinOrLeave() {
        print("equal weights", run(false));
    }

    @Test
    void movesLittleMoreThanTheNecessaryPrimariesWhenMembersOfRandomWeightJoinOrLeave() {
        print("weights 1..4x", run(true));
    }

    private static Extremes run(boolean weighted) {
        Extremes extremes = new Extremes();
        for (long seed = 0; seed < RUNS; seed++) {
            Random random = new Random(seed);
            List<Member> members = Memberships.members(random, 1 + random.nextInt(63), weighted);
            SlotTable before = Placement.compute(1, members, 0); // replicas never move primaries
            checkJoin(seed, before, Memberships.newMember(random, members, weighted), extremes);
            checkLeave(seed, before, members.get(random.nextInt(members.size())), extremes);
        }
        return extremes;
    }

    private static void checkJoin(long seed, SlotTable before, Member joiner, Extremes extremes) {
        List<Member> after = new ArrayList<>(before.members());
        after.add(joiner);
        double moved = (double) before.movedPrimaries(Placement.compute(2, after, 0)) / SLOTS;
        double share = (double) joiner.weight() / Memberships.totalWeight(after);

        assertThat(moved).as("seed %d: %s joins %d members", seed, joiner, before.members().size())
                .isLessThanOrEqualTo(share + SLACK);
        extremes.maxJoinMoved = Math.max(extremes.maxJoinMoved, moved);
        extremes.maxJoinExcess = Math.max(extremes.maxJoinExcess, moved - share);
    }

    private static void checkLeave(long seed, SlotTable before, Member leaver, Extremes extremes) {
        List<Member> after = new ArrayList<>(before.members());
        after.remove(leaver);
        double moved = (double) before.movedPrimaries(Placement.compute(2, after, 0)) / SLOTS;
        double own = (double) before.primaryCount(leaver) / SLOTS;

        assertThat(moved).as("seed %d: %s leaves %d members", seed, leaver, before.members().size())
                .isLessThanOrEqualTo(own + SLACK);
        extremes.maxLeaveMoved = Math.max(extremes.maxLeaveMoved, moved);
        extremes.maxLeaveExcess = Math.max(extremes.maxLeaveExcess, moved - own);
    }

    private static void print(String variant, Extremes e) {
        System.out.printf("movement over %d memberships, %s: join moved at most %.2f%% of primaries (%.2f%% above"
                + " the joiner's share), leave at most %.2f%% (%.2f%% above the leaver's own)%n", RUNS, variant,
                100 * e.maxJoinMoved, 100 * e.maxJoinExcess, 100 * e.maxLeaveMoved, 100 * e.maxLeaveExcess);
    }
}
