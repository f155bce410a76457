package io.kvtier.bench.chart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class LatencyCurveTest {
    private static final double[] ONE_TO_THOUSAND = IntStream.rangeClosed(1, 1000).asDoubleStream().toArray();

    @Test
    void nearestRankPicksTheSmallestValueCoveringTheQuantile() {
        assertThat(LatencyCurve.nearestRank(ONE_TO_THOUSAND, 0)).isEqualTo(1);
        assertThat(LatencyCurve.nearestRank(ONE_TO_THOUSAND, 0.5)).isEqualTo(500);
        assertThat(LatencyCurve.nearestRank(ONE_TO_THOUSAND, 0.99)).isEqualTo(990);
        assertThat(LatencyCurve.nearestRank(ONE_TO_THOUSAND, 1)).isEqualTo(1000);
    }

    @Test
    void curveRisesToTheMaximumAtLog10OfTheCount() {
        LatencyCurve curve = LatencyCurve.sample(1000, q -> LatencyCurve.nearestRank(ONE_TO_THOUSAND, q));

        int last = curve.nines().length - 1;
        assertThat(curve.nines()[0]).isZero();
        assertThat(curve.nines()[last]).isCloseTo(3, within(1e-6));
        assertThat(curve.millis()[last]).isEqualTo(1000);
        for (int i = 1; i <= last; i++) {
            assertThat(curve.nines()[i]).isGreaterThan(curve.nines()[i - 1]);
            assertThat(curve.millis()[i]).isGreaterThanOrEqualTo(curve.millis()[i - 1]);
        }
        int p99 = 2 * LatencyCurve.STEPS_PER_NINE;
        assertThat(curve.millis()[p99]).isEqualTo(990);
    }

    @Test
    void aSingleSampleIsAPointAndZeroLatencyIsLiftedOntoTheLogAxis() {
        LatencyCurve curve = LatencyCurve.sample(1, q -> 0.0);

        assertThat(curve.millis()).containsOnly(LatencyCurve.FLOOR_MILLIS);
        assertThatThrownBy(() -> LatencyCurve.sample(0, q -> 1.0)).hasMessageContaining("at least one sample");
    }

    @Test
    void percentileLabelsSitOnWholeNines() {
        assertThat(LatencyCurve.percentileLabel(0)).isEqualTo("0%");
        assertThat(LatencyCurve.percentileLabel(1)).isEqualTo("90%");
        assertThat(LatencyCurve.percentileLabel(2)).isEqualTo("99%");
        assertThat(LatencyCurve.percentileLabel(4)).isEqualTo("99.99%");
        assertThat(LatencyCurve.percentileLabel(2.5)).isEmpty();
    }
}
