package io.kvtier.bench.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class LatencyStatsTest {
    private static final FleetRequest REQUEST = new FleetRequest("u", 0, new int[] {1}, 5);

    /** A request sent at 0 with its first token at {@code ttftMs} and its 5 tokens taking {@code tpotMs} each. */
    static RequestResult ok(double ttftMs, double tpotMs) {
        long first = Math.round(ttftMs * 1e6);
        return new RequestResult(REQUEST, 0, first, first + Math.round(4 * tpotMs * 1e6), 100, 5, 40, null);
    }

    static RequestResult failed(String why) {
        return new RequestResult(REQUEST, 0, 0, 0, 0, 0, 0, why);
    }

    @Test
    void percentilesInterpolateBetweenRanksAsNumpyDoes() {
        // TTFTs 10, 20, ..., 100 ms: p50 = 55, p90 = 91, p99 = 99.1 (numpy.percentile, linear).
        List<RequestResult> results = new ArrayList<>();
        for (int i = 10; i >= 1; i--) {
            results.add(ok(i * 10, i));
        }
        LatencyStats s = LatencyStats.of(results, 2);

        assertThat(s.ttftP50()).isCloseTo(0.055, within(1e-12));
        assertThat(s.ttftP90()).isCloseTo(0.091, within(1e-12));
        assertThat(s.ttftP99()).isCloseTo(0.0991, within(1e-12));
        assertThat(s.ttftMean()).isCloseTo(0.055, within(1e-12));
        assertThat(s.tpotP50()).isCloseTo(0.0055, within(1e-12));
        assertThat(s.tpotP90()).isCloseTo(0.0091, within(1e-12));
        assertThat(s.tpotMean()).isCloseTo(0.0055, within(1e-12));
        // 1 / TPOT: 1000, 500, 333.3, 250, 200, 166.7, 142.9, 125, 111.1, 100 tokens/s
        double mean = 0;
        for (int i = 1; i <= 10; i++) {
            mean += 1000.0 / i / 10;
        }
        assertThat(s.tokensPerSecondPerUser()).isCloseTo(mean, within(1e-9));
        assertThat(s.tokensPerSecondPerUserMedian()).isCloseTo((200 + 1000.0 / 6) / 2, within(1e-9));
        // end to end: TTFT + 4 x TPOT = 14 i ms
        assertThat(s.e2eP50()).isCloseTo(0.077, within(1e-12));
        assertThat(s.e2eP90()).isCloseTo(0.1274, within(1e-12));
        assertThat(s.requestsPerSecond()).isEqualTo(5);
        assertThat(s.outputTokensPerSecond()).isEqualTo(25);
        assertThat(s.promptTokens()).isEqualTo(1000);
        assertThat(s.cachedTokens()).isEqualTo(400);
    }

    @Test
    void errorsAreCountedApartAndTheirFirstFiveDistinctMessagesKept() {
        List<RequestResult> results = new ArrayList<>(List.of(ok(10, 1), ok(30, 1)));
        for (String why : List.of("a", "b", "a", "c", "d", "e", "f")) {
            results.add(failed(why));
        }
        LatencyStats s = LatencyStats.of(results, 1);

        assertThat(s.ok()).isEqualTo(2);
        assertThat(s.errors()).isEqualTo(7);
        assertThat(s.firstErrors()).containsExactly("a", "b", "c", "d", "e");
        assertThat(s.ttftP50()).isCloseTo(0.02, within(1e-12)); // failed requests have no latency
        assertThat(s.requestsPerSecond()).isEqualTo(2);
        assertThat(s.errorRate()).isCloseTo(7 / 9.0, within(1e-12));
    }

    @Test
    void oneTokenAnswersHaveATtftButNoTpot() {
        RequestResult single = new RequestResult(REQUEST, 0, 5_000_000, 5_000_000, 10, 1, 0, null);
        LatencyStats s = LatencyStats.of(List.of(single), 1);
        assertThat(s.ttftP50()).isCloseTo(0.005, within(1e-12));
        assertThat(s.tpotP50()).isNaN();
        assertThat(s.tokensPerSecondPerUser()).isNaN();
    }

    @Test
    void nothingMeasuredGivesZeroCountsAndNaNLatencies() {
        LatencyStats s = LatencyStats.of(List.of(), 0);
        assertThat(s.ok()).isZero();
        assertThat(s.errors()).isZero();
        assertThat(s.firstErrors()).isEmpty();
        assertThat(s.ttftP99()).isNaN();
        assertThat(s.e2eP90()).isNaN();
        assertThat(s.requestsPerSecond()).isZero();
        assertThat(s.outputTokensPerSecond()).isZero();
        assertThat(s.errorRate()).isZero();
    }

    @Test
    void aNegativeLengthIsRefused() {
        assertThatThrownBy(() -> LatencyStats.of(List.of(), -1)).hasMessageContaining("measured seconds -1.0");
        assertThatThrownBy(() -> LatencyStats.of(List.of(), Double.NaN)).hasMessageContaining("NaN");
    }
}
