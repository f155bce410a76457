package io.kvtier.store.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class S3FifoPolicyTest {

    @Test
    void newItemsEnterTheProbationaryQueue() {
        S3FifoPolicy policy = new S3FifoPolicy(100, 10);
        policy.add(new TestNode(1, 7));
        assertThat(policy.smallWeight()).isEqualTo(7);
        assertThat(policy.mainWeight()).isZero();
    }

    @Test
    void ghostReadmissionGoesToMain() {
        S3FifoPolicy policy = new S3FifoPolicy(100, 10);
        TestNode first = new TestNode(1);
        policy.add(first);
        assertThat(policy.nextVictim()).isSameAs(first);

        TestNode again = new TestNode(1);
        policy.add(again);
        assertThat(policy.mainWeight()).isEqualTo(1);
        assertThat(policy.smallWeight()).isZero();

        TestNode third = new TestNode(1);
        policy.remove(again);
        policy.add(third);
        assertThat(policy.smallWeight()).as("a ghost admits once").isEqualTo(1);
    }

    @Test
    void ghostsAreForgottenOldestFirstPastTheLimit() {
        S3FifoPolicy policy = new S3FifoPolicy(100, 2);
        for (long k = 1; k <= 3; k++) {
            policy.add(new TestNode(k));
            assertThat(policy.nextVictim()).isNotNull();
        }
        policy.add(new TestNode(1));
        assertThat(policy.smallWeight()).as("ghost 1 was forgotten").isEqualTo(1);
        policy.add(new TestNode(3));
        assertThat(policy.mainWeight()).as("ghost 3 is remembered").isEqualTo(1);
    }

    @Test
    void hitOnProbationMovesToMainInsteadOfLeaving() {
        S3FifoPolicy policy = new S3FifoPolicy(100, 10);
        List<TestNode> nodes = add(policy, 20);
        nodes.get(0).recordAccess();

        assertThat(policy.nextVictim()).isSameAs(nodes.get(1));
        assertThat(policy.mainWeight()).isEqualTo(1);
        assertThat(nodes.get(0).isQueued()).isTrue();
    }

    @Test
    void mainReinsertsItsHeadWhileItsFrequencyLasts() {
        S3FifoPolicy policy = new S3FifoPolicy(1000, 10);
        for (long k = 1; k <= 2; k++) {
            policy.add(new TestNode(k));
            policy.nextVictim(); // leaves as a ghost
        }
        TestNode hot = new TestNode(1);
        TestNode cold = new TestNode(2);
        policy.add(hot);
        policy.add(cold);
        assertThat(policy.mainWeight()).isEqualTo(2);
        hot.recordAccess();
        hot.recordAccess();

        assertThat(policy.nextVictim()).isSameAs(cold);
        assertThat(policy.nextVictim()).as("after two reinsertions").isSameAs(hot);
        assertThat(policy.nextVictim()).isNull();
    }

    @Test
    void removeFromTheMiddleOfEitherQueueKeepsTheOrder() {
        S3FifoPolicy policy = new S3FifoPolicy(1000, 10);
        List<TestNode> nodes = add(policy, 5);
        policy.remove(nodes.get(2));
        assertThat(nodes.get(2).isQueued()).isFalse();
        assertThat(policy.smallWeight()).isEqualTo(4);
        policy.remove(nodes.get(2)); // not queued: a no-op

        assertThat(drain(policy)).containsExactly(nodes.get(0), nodes.get(1), nodes.get(3), nodes.get(4));
        assertThat(policy.smallWeight()).isZero();
        assertThat(policy.mainWeight()).isZero();
    }

    @Test
    void lruEvictsLeastRecentlyTouchedAndRemovesFromTheMiddle() {
        LruPolicy policy = new LruPolicy();
        List<TestNode> nodes = add(policy, 5);
        policy.touch(nodes.get(0));
        policy.remove(nodes.get(3));
        policy.remove(nodes.get(3));

        assertThat(drain(policy)).containsExactly(nodes.get(1), nodes.get(2), nodes.get(4), nodes.get(0));
    }

    private static List<TestNode> add(TierPolicy policy, int n) {
        List<TestNode> nodes = new ArrayList<>();
        for (long k = 0; k < n; k++) {
            TestNode node = new TestNode(k);
            policy.add(node);
            nodes.add(node);
        }
        return nodes;
    }

    private static List<PolicyNode> drain(TierPolicy policy) {
        List<PolicyNode> out = new ArrayList<>();
        for (PolicyNode n = policy.nextVictim(); n != null; n = policy.nextVictim()) {
            out.add(n);
        }
        return out;
    }
}
