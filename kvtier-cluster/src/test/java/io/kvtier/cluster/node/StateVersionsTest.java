package io.kvtier.cluster.node;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class StateVersionsTest {
    private static byte[] key(String k) {
        return k.getBytes(StandardCharsets.UTF_8);
    }

    /** Two keys of one bucket, found by search (the hash is fixed, so the search always ends the same way). */
    private static byte[][] collidingPair() {
        byte[] first = key("k0");
        for (int i = 1; ; i++) {
            byte[] other = key("k" + i);
            if (StateVersions.bucket(other) == StateVersions.bucket(first)) {
                return new byte[][] {first, other};
            }
        }
    }

    @Test
    void versionsGrowAndALaterEpochIsAboveEveryVersionOfAnEarlierOne() {
        StateVersions v = new StateVersions();
        long a = v.next(3);
        long b = v.next(3);
        assertThat(b).isGreaterThan(a);
        assertThat(StateVersions.epochOf(a)).isEqualTo(3);
        long later = v.next(4);
        assertThat(later).isEqualTo(4L << StateVersions.COUNTER_BITS);
        StateVersions other = new StateVersions(); // another node, later primary at epoch 4
        for (int i = 0; i < 1000; i++) {
            other.next(3);
        }
        assertThat(new StateVersions().next(4)).isGreaterThan(other.next(3));
    }

    @Test
    void aRefusalsNewestMovesTheCounterPastIt() {
        StateVersions v = new StateVersions();
        v.refusedBelow((7L << StateVersions.COUNTER_BITS) + 500);
        assertThat(v.next(5)).isEqualTo((7L << StateVersions.COUNTER_BITS) + 501);
        assertThat(v.refusedNewest()).isEqualTo((7L << StateVersions.COUNTER_BITS) + 500);
        v.observe(1); // an older one changes nothing
        assertThat(v.next(5)).isEqualTo((7L << StateVersions.COUNTER_BITS) + 502);
    }

    @Test
    void anOlderStateOfAKeyIsRefusedAndAnEqualOrNewerOneAdmitted() {
        StateVersions v = new StateVersions();
        byte[][] k = {key("user:1")};
        assertThat(v.admit(k, 10)).isTrue();
        assertThat(v.admit(k, 9)).isFalse();
        assertThat(v.newest(k)).isEqualTo(10);
        assertThat(v.admit(k, 10)).as("the same state again (a resend)").isTrue();
        assertThat(v.admit(k, 11)).isTrue();
        assertThat(v.newest(key("user:1"))).isEqualTo(11);
    }

    @Test
    void aCollisionOnlyCostsARetryAndAnotherBucketIsUntouched() {
        StateVersions v = new StateVersions();
        byte[][] pair = collidingPair();
        assertThat(v.admit(new byte[][] {pair[0]}, 100)).isTrue();
        assertThat(v.admit(new byte[][] {pair[1]}, 50)).as("older than its bucket's newest: refused").isFalse();
        long retry = Math.max(51, v.newest(pair[1]) + 1);
        assertThat(v.admit(new byte[][] {pair[1]}, retry)).isTrue();
        byte[] elsewhere = key("elsewhere");
        assertThat(StateVersions.bucket(elsewhere)).isNotEqualTo(StateVersions.bucket(pair[0]));
        assertThat(v.admit(new byte[][] {elsewhere}, 1)).isTrue();
    }

    @Test
    void aUnitIsAdmittedWholeOrNotAtAll() {
        StateVersions v = new StateVersions();
        byte[] a = key("a");
        byte[] b = key("b");
        assertThat(v.admit(new byte[][] {b}, 20)).isTrue();
        assertThat(v.admit(new byte[][] {a, b}, 15)).isFalse();
        assertThat(v.newest(a)).as("nothing recorded for a refused unit").isZero();
        assertThat(v.admit(new byte[][] {a, b}, 21)).isTrue();
        assertThat(v.newest(new byte[][] {a, b})).isEqualTo(21);
    }

    @Test
    void increasingStatesOfFarMoreKeysThanBucketsAreAllAdmitted() {
        StateVersions v = new StateVersions();
        for (int i = 0; i < 4 * StateVersions.BUCKETS; i++) {
            assertThat(v.admit(new byte[][] {key("many:" + i)}, v.next(1))).isTrue();
        }
    }
}
