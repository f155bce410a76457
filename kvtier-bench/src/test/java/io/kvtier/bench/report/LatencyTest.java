package io.kvtier.bench.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class LatencyTest {

    @Test
    void roundsNanosToTheNearestMicrosecondAndClampsToTheRange() {
        assertThat(Latency.toMicros(0)).isEqualTo(1);
        assertThat(Latency.toMicros(1_499)).isEqualTo(1);
        assertThat(Latency.toMicros(1_500)).isEqualTo(2);
        assertThat(Latency.toMicros(2_345_678)).isEqualTo(2_346);
        assertThat(Latency.toMicros(70_000_000_000L)).isEqualTo(Latency.HIGHEST_MICROS);
    }

    @Test
    void aStallLongerThanTheRangeIsCountedNotDropped() {
        Histogram h = Latency.newHistogram();
        Latency.recordNanos(h, 3_600_000_000_000L);
        assertThat(h.getTotalCount()).isEqualTo(1);
        assertThat(Latency.summarize(h).max()).isCloseTo(60_000, within(60.0));
    }

    @Test
    void percentilesOfAUniformSpreadAreWithinTheHistogramsPrecision() {
        Histogram h = Latency.newHistogram();
        for (int ms = 1; ms <= 1000; ms++) {
            Latency.recordNanos(h, ms * 1_000_000L);
        }
        LatencySummary s = Latency.summarize(h);
        assertThat(s.p50()).isCloseTo(500, within(0.5));
        assertThat(s.p90()).isCloseTo(900, within(0.9));
        assertThat(s.p99()).isCloseTo(990, within(1.0));
        assertThat(s.p999()).isCloseTo(999, within(1.0));
        assertThat(s.max()).isCloseTo(1000, within(1.0));
        assertThat(s.mean()).isCloseTo(500.5, within(0.5));
    }

    @Test
    void reportedPercentilesNeverUnderstateTheTrueValue() {
        Histogram h = Latency.newHistogram();
        for (int i = 0; i < 99; i++) {
            Latency.recordNanos(h, 1_000_000);
        }
        Latency.recordNanos(h, 123_456_000);
        LatencySummary s = Latency.summarize(h);
        assertThat(s.p50()).isGreaterThanOrEqualTo(1.0).isLessThan(1.002);
        assertThat(s.p99()).isGreaterThanOrEqualTo(1.0).isLessThan(1.002);
        assertThat(s.max()).isGreaterThanOrEqualTo(123.456).isLessThan(123.456 * 1.001);
    }

    @Test
    void anEmptyHistogramHasNoLatencies() {
        LatencySummary s = Latency.summarize(Latency.newHistogram());
        assertThat(s).isEqualTo(LatencySummary.EMPTY);
        assertThat(s.p50()).isNaN();
    }

    @Test
    void encodedHistogramsDecodeToTheSameCounts() {
        Histogram h = Latency.newHistogram();
        for (int i = 1; i <= 5000; i++) {
            Latency.recordNanos(h, i * 7_919L);
        }
        Histogram back = Latency.decode(Latency.encode(h));
        assertThat(back).isEqualTo(h);
        assertThat(back.getValueAtPercentile(99)).isEqualTo(h.getValueAtPercentile(99));
    }

    @Test
    void garbageIsNotAHistogram() {
        assertThatThrownBy(() -> Latency.decode("bm90IGEgaGlzdG9ncmFt"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not an encoded HdrHistogram");
    }
}
