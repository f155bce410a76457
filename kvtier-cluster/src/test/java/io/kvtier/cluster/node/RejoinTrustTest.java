package io.kvtier.cluster.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.client.cluster.SlotHash;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Which of a rejoining node's slots it keeps, from the others' lastComplete stamps and trust (ClusterNode.isStale). */
class RejoinTrustTest {
    private static final long T5 = 5L << 32 | 0xaaaa;
    private static final long T5_OTHER_SIDE = 5L << 32 | 0xbbbb;
    private static final long T6 = 6L << 32 | 0x1234;

    /** One member's SLOTINFO answer: {@code stamp} for slot 0, and whether it serves trusted data. */
    private static long[] answer(long stamp, boolean trusted) {
        long[] info = new long[SlotHash.SLOTS + 1];
        info[0] = stamp;
        info[SlotHash.SLOTS] = trusted ? 1 : 0;
        return info;
    }

    @Test
    void dropsWhatItNeverHeldCompletelyOrOthersHoldFromANewerEpoch() {
        assertThat(ClusterNode.isStale(0, 0, List.of())).isTrue();
        assertThat(ClusterNode.isStale(0, T5, List.of(answer(T6, false)))).isTrue();
    }

    @Test
    void keepsWhatNobodyElseHoldsAsTheSurvivorOfATwoNodeCluster() {
        assertThat(ClusterNode.isStale(0, T5, List.of(answer(0, false)))).isFalse();
    }

    @Test
    void yieldsToAMemberThatNeverLeftEvenWithTheSameStamp() {
        // back from a pause: the peer kept serving this table and wrote what this node missed
        assertThat(ClusterNode.isStale(0, T5, List.of(answer(T5, true)))).isTrue();
        // back from a minority that served a table of the majority's epoch: the majority's copy is current
        assertThat(ClusterNode.isStale(0, T5, List.of(answer(T5_OTHER_SIDE, true)))).isTrue();
    }

    @Test
    void amongRejoiningHoldersTheStampMostOfThemHoldKeeps() {
        // a two-node cluster back from a pause of both: one table, both keep
        assertThat(ClusterNode.isStale(0, T5, List.of(answer(T5, false)))).isFalse();
        // a table of one epoch on each side: the side with more holders keeps, the other drops
        List<long[]> others = List.of(answer(T5_OTHER_SIDE, false), answer(T5_OTHER_SIDE, false));
        assertThat(ClusterNode.isStale(0, T5, others)).isTrue();
        assertThat(ClusterNode.isStale(0, T5_OTHER_SIDE, List.of(answer(T5, false), answer(T5_OTHER_SIDE, false))))
                .isFalse();
        // one against one: exactly one of them keeps
        assertThat(ClusterNode.isStale(0, T5, List.of(answer(T5_OTHER_SIDE, false))))
                .isNotEqualTo(ClusterNode.isStale(0, T5_OTHER_SIDE, List.of(answer(T5, false))));
    }
}
