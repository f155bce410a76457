package io.kvtier.bench.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class FleetTimelineTest {
    private static final long START = 1_000_000_000L;
    private static final FleetRequest REQUEST = new FleetRequest("user-1", 0, new int[] {1}, 1);

    private static RequestResult sentAt(double seconds, double ttft, int prompt, int cached) {
        long sent = START + Math.round(seconds * 1e9);
        long first = sent + Math.round(ttft * 1e9);
        return new RequestResult(REQUEST, sent, first, first + 1_000_000, prompt, 1, cached, null);
    }

    private static RequestResult failedAt(double seconds) {
        long sent = START + Math.round(seconds * 1e9);
        return new RequestResult(REQUEST, sent, 0, sent, 0, 0, 0, "client: connection refused");
    }

    /**
     * Ten seconds, a request sent every half second; a node killed at 5.5 s: before it TTFT is 0.1 s and 90% of the
     * prompt is cached, after it 2 s and 10%, and one request sent at 6.25 s failed.
     */
    static FleetTimeline killed() {
        List<RequestResult> results = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            double at = i * 0.5;
            boolean after = at >= 5.5;
            results.add(sentAt(at, after ? 2.0 : 0.1, 1000, after ? 100 : 900));
        }
        results.add(failedAt(6.25));
        results.add(sentAt(10.5, 0.1, 1000, 1000)); // after the point's end: left out
        return FleetTimeline.of(results, START, 10, 1, 5.5, "n3");
    }

    @Test
    void requestsFallInTheBucketOfTheirSendTime() {
        FleetTimeline t = killed();

        assertThat(t.buckets()).hasSize(10);
        assertThat(t.seconds()).containsExactly(0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
        FleetTimeline.Bucket first = t.buckets().getFirst();
        assertThat(first.ok()).isEqualTo(2);
        assertThat(first.errors()).isZero();
        assertThat(first.ttftP50()).isCloseTo(0.1, within(1e-9));
        assertThat(first.cachedShare()).isCloseTo(0.9, within(1e-9));
        FleetTimeline.Bucket kill = t.buckets().get(5); // 5.0 s: one before the kill, one after
        assertThat(kill.ttftMax()).isCloseTo(2.0, within(1e-9));
        assertThat(kill.cachedShare()).isCloseTo(0.5, within(1e-9));
        assertThat(t.buckets().get(6).errors()).isEqualTo(1);
        assertThat(t.buckets().get(6).ok()).isEqualTo(2);
        assertThat(t.buckets().stream().mapToInt(FleetTimeline.Bucket::ok).sum()).isEqualTo(20);
    }

    @Test
    void theWorstBucketBeforeAndAfterTheKillSaysWhatTheFleetSaw() {
        FleetTimeline t = killed();

        assertThat(t.hasKill()).isTrue();
        assertThat(t.killed()).isEqualTo("n3");
        assertThat(t.worstP90Before(t.killedAtSeconds())).isCloseTo(0.1, within(1e-9)); // buckets 0..4
        assertThat(t.worstP90After(t.killedAtSeconds())).isCloseTo(2.0, within(1e-9)); // 5 (straddling) on
    }

    @Test
    void aBucketWithoutCompletedRequestsHasNoLatencies() {
        FleetTimeline t = FleetTimeline.of(List.of(failedAt(0.5), sentAt(2.5, 0.2, 10, 0)), START, 3, 1, Double.NaN,
                null);

        assertThat(t.hasKill()).isFalse();
        assertThat(t.buckets().get(0).errors()).isEqualTo(1);
        assertThat(t.buckets().get(0).ttftP50()).isNaN();
        assertThat(t.buckets().get(1).ok()).isZero();
        assertThat(t.buckets().get(1).cachedShare()).isNaN();
        assertThat(t.buckets().get(2).cachedShare()).isZero();
        assertThat(t.worstP90Before(2)).isNaN();
    }
}
