package io.kvtier.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.BitSet;
import org.junit.jupiter.api.Test;

class TimelineTest {
    private static final long MS = 1_000_000;

    @Test
    void commandsAreCountedInTheBucketTheyCompletedInReadsApartFromWrites() {
        Timeline t = new Timeline(Duration.ofMillis(100), Duration.ofSeconds(1), Duration.ZERO);
        t.start();
        long o = t.originNanos();

        t.completed(1, false, o, o + 50 * MS, null);
        t.completed(1, true, o, o + 150 * MS, null);
        t.completed(1, true, o + 10 * MS, o + 160 * MS, "TRYAGAIN");
        t.completed(1, false, o + 10 * MS, o + 170 * MS, "timeout");
        TimelineData d = t.snapshot(10);

        assertThat(d.get(TimelineData.READS_OK, 0)).isEqualTo(1);
        assertThat(d.get(TimelineData.WRITES_OK, 1)).isEqualTo(1);
        assertThat(d.get(TimelineData.WRITE_ERRORS, 1)).isEqualTo(1);
        assertThat(d.get(TimelineData.READ_ERRORS, 1)).isEqualTo(1);
        assertThat(d.get(TimelineData.MAX_LATENCY_NANOS, 1)).isEqualTo(160 * MS);
        assertThat(d.errorKinds()).containsEntry("TRYAGAIN", 1L).containsEntry("timeout", 1L);
        assertThat(d.lastErrorBetween(0, 1)).isEqualTo(0.17, org.assertj.core.data.Offset.offset(1e-9));
    }

    @Test
    void commandsStartedBeforeTheTimelineAreNotCounted() {
        Timeline t = new Timeline(Duration.ofMillis(100), Duration.ofSeconds(1), Duration.ZERO);
        long before = System.nanoTime();
        t.start();

        t.completed(1, false, before, t.originNanos() + MS, null);

        assertThat(t.snapshot(10).total(TimelineData.READS_OK)).isZero();
    }

    @Test
    void lateCompletionsLandInTheSlackAndAfterThatInTheLastBucket() {
        Timeline t = new Timeline(Duration.ofMillis(100), Duration.ofMillis(200), Duration.ofMillis(100));
        t.start();
        long o = t.originNanos();

        t.completed(1, false, o, o + 250 * MS, null);
        t.completed(1, false, o, o + 10_000 * MS, null);

        assertThat(t.snapshot(3).get(TimelineData.READS_OK, 2)).isEqualTo(2);
    }

    @Test
    void successesOnTheKilledNodesKeysCountOnlyForCommandsSentAfterTheKill() {
        Timeline t = new Timeline(Duration.ofMillis(100), Duration.ofSeconds(1), Duration.ZERO);
        t.start();
        long o = t.originNanos();
        BitSet victim = new BitSet();
        victim.set(7);
        t.markKill(o + 200 * MS, victim);

        t.completed(7, false, o + 100 * MS, o + 300 * MS, null); // in flight at the kill
        t.completed(8, false, o + 300 * MS, o + 350 * MS, null); // another node's key
        t.completed(7, false, o + 400 * MS, o + 450 * MS, "closed");
        t.completed(7, true, o + 500 * MS, o + 650 * MS, null);
        TimelineData d = t.snapshot(10);

        assertThat(d.total(TimelineData.VICTIM_OK)).isEqualTo(1);
        assertThat(d.get(TimelineData.VICTIM_OK, 6)).isEqualTo(1);
        assertThat(d.firstVictimOkNanos()).isEqualTo(650 * MS);
    }
}
