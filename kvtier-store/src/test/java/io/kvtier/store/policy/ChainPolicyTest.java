package io.kvtier.store.policy;

import static io.kvtier.store.policy.TestNode.victims;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** ChainPolicy on crafted sequences whose eviction order is known. */
class ChainPolicyTest {

    /** Adds a chain of {@code n} nodes, keys from {@code first}, each linked to the one before; returns them. */
    private static List<TestNode> chain(ChainPolicy policy, long first, int n) {
        List<TestNode> nodes = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            TestNode node = new TestNode(first + i);
            node.parent = i == 0 ? null : nodes.get(i - 1);
            policy.add(node);
            nodes.add(node);
        }
        return nodes;
    }

    @Test
    void aPromptsChunksLeaveTailFirstSoWhatStaysIsAUsablePrefix() {
        ChainPolicy policy = new ChainPolicy(100, 10);
        chain(policy, 0, 5);
        assertThat(victims(policy, 5)).containsExactly(4L, 3L, 2L, 1L, 0L);
    }

    @Test
    void chunksWithAParentSkipProbationAndPromoteTheirHead() {
        ChainPolicy policy = new ChainPolicy(100, 10);
        TestNode plain = new TestNode(100);
        policy.add(plain); // no chain: probation, as S3-FIFO
        List<TestNode> prompt = chain(policy, 0, 3);
        for (TestNode n : prompt) {
            assertThat(n.queue).as("chain node %s in main", n).isEqualTo((byte) 2);
        }
        assertThat(plain.queue).as("a plain key stays on probation").isEqualTo((byte) 1);
        // Probation (10% of 100) holds only the plain key: main is swept first while probation is under its share.
        assertThat(victims(policy, 4)).containsExactly(2L, 1L, 0L, 100L);
    }

    @Test
    void aLaterTurnsNewChunksGoAheadOfItsReadPrefixWhichTheSweepKeeps() {
        ChainPolicy policy = new ChainPolicy(100, 10);
        List<TestNode> turn1 = chain(policy, 0, 3);
        chain(policy, 50, 20); // other prompts meanwhile: turn 1 is now far from the last placements
        // Turn 2 reads turn 1's chunks (hits), then writes two more after them.
        turn1.forEach(PolicyNode::recordAccess);
        TestNode c3 = new TestNode(3);
        c3.parent = turn1.get(2);
        policy.add(c3);
        TestNode c4 = new TestNode(4);
        c4.parent = c3;
        policy.add(c4);
        List<Long> order = victims(policy, 25);
        // Turn 1's read chunks come back once, after everything else; turn 2's new chunks leave before them, tail
        // first.
        assertThat(order.subList(22, 25)).containsExactly(2L, 1L, 0L);
        assertThat(order.indexOf(4L)).isLessThan(order.indexOf(3L));
        assertThat(order.indexOf(3L)).isLessThan(order.indexOf(2L));
    }

    @Test
    void aScanOfPlainKeysDoesNotFlushTheHotSet() {
        ChainPolicy policy = new ChainPolicy(100, 1_000);
        List<TestNode> hot = new ArrayList<>();
        for (long k = 0; k < 50; k++) {
            TestNode n = new TestNode(k);
            policy.add(n);
            hot.add(n);
        }
        hot.forEach(PolicyNode::recordAccess);
        long live = 50;
        for (long k = 1_000; k < 1_500; k++) { // a one-pass scan of 500 cold keys through a tier of 100
            policy.add(new TestNode(k));
            live++;
            while (live > 100) {
                policy.nextVictim();
                live--;
            }
        }
        assertThat(hot).allMatch(PolicyNode::isQueued);
    }
}
