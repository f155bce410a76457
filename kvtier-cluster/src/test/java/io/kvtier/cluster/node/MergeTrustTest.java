package io.kvtier.cluster.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.client.cluster.SlotHash;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Which slots a node yields when its cluster merges into a table where its last serving members are no more than half
 * (ClusterNode.outranked): those a newcomer holds a newer complete copy of.
 */
class MergeTrustTest {
    /** A joiner that founded a cluster of its own: epoch 1, one member. */
    private static final long ALONE = 1L << 32 | 0x0101;
    private static final long T3 = 3L << 32 | 0x3333;
    private static final long T4 = 4L << 32 | 0x4444;
    private static final long T1_OTHER_SIDE = 1L << 32 | 0x0202;

    /** One newcomer's SLOTINFO answer: {@code stamp} for slot 0, trusted. */
    private static long[] answer(long stamp) {
        long[] info = new long[SlotHash.SLOTS + 1];
        info[0] = stamp;
        info[SlotHash.SLOTS] = 1;
        return info;
    }

    @Test
    void aLoneFounderYieldsEverySlotTheRunningClusterHolds() {
        // ClusterAuthIT: the fourth node founded alone, then merged with three nodes serving epoch 3 or 4 already
        assertThat(ClusterNode.outranked(0, ALONE, List.of(answer(T3), answer(T3), answer(0)))).isTrue();
        assertThat(ClusterNode.outranked(0, ALONE, List.of(answer(T4)))).isTrue();
    }

    @Test
    void aLoneNodeKeepsItsDataWhenFreshNodesJoinIt() {
        assertThat(ClusterNode.outranked(0, ALONE, List.of(answer(0)))).isFalse();
        assertThat(ClusterNode.outranked(0, T3, List.of(answer(0), answer(0)))).isFalse();
        assertThat(ClusterNode.outranked(0, T3, List.of())).as("no newcomer answered").isFalse();
    }

    @Test
    void ofTwoClustersThatPublishedOneEpochExactlyOneYields() {
        boolean mineYields = ClusterNode.outranked(0, ALONE, List.of(answer(T1_OTHER_SIDE)));
        boolean theirsYields = ClusterNode.outranked(0, T1_OTHER_SIDE, List.of(answer(ALONE)));
        assertThat(mineYields).isNotEqualTo(theirsYields);
    }

    @Test
    void identicalStampsAreOneTableAndNeitherYields() {
        assertThat(ClusterNode.outranked(0, T3, List.of(answer(T3)))).isFalse();
    }

    @Test
    void aSlotNotCompleteHereYieldsToAnyHolder() {
        assertThat(ClusterNode.outranked(0, 0, List.of(answer(T3)))).isTrue();
        assertThat(ClusterNode.outranked(0, 0, List.of(answer(0)))).isFalse();
    }
}
