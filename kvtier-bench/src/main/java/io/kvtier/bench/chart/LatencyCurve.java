package io.kvtier.bench.chart;

import java.util.function.DoubleUnaryOperator;

/**
 * A latency distribution sampled for plotting on a "nines" scale: y = -log10(1 - q) for quantile q, so that 90%,
 * 99%, 99.9% and 99.99% sit at 1, 2, 3 and 4 and the tail gets as much room as the body. Immutable.
 *
 * @param millis latency at each point, milliseconds, never decreasing
 * @param nines  -log10(1 - q) at each point, increasing; the last point is the maximum, at log10(count)
 */
record LatencyCurve(double[] millis, double[] nines) {
    /** Points per nine: enough for a smooth line, few enough for a small SVG. */
    static final int STEPS_PER_NINE = 50;
    /** A log axis cannot show zero; anything faster than a microsecond is drawn at one. */
    static final double FLOOR_MILLIS = 0.001;

    /** Samples {@code quantileMillis}, the latency at quantile q in [0, 1], for a distribution of {@code count}. */
    static LatencyCurve sample(long count, DoubleUnaryOperator quantileMillis) {
        if (count < 1) {
            throw new IllegalArgumentException("a latency distribution needs at least one sample, got " + count);
        }
        double maxNines = Math.log10(count);
        int points = (int) Math.floor(maxNines * STEPS_PER_NINE) + 1;
        double[] millis = new double[points + 1];
        double[] nines = new double[points + 1];
        for (int i = 0; i < points; i++) {
            nines[i] = (double) i / STEPS_PER_NINE;
            millis[i] = Math.max(FLOOR_MILLIS, quantileMillis.applyAsDouble(1 - Math.pow(10, -nines[i])));
        }
        nines[points] = Math.max(maxNines, nines[points - 1] + 1e-9);
        millis[points] = Math.max(FLOOR_MILLIS, quantileMillis.applyAsDouble(1.0));
        return new LatencyCurve(millis, nines);
    }

    /** The nearest-rank quantile of ascending {@code sorted}. */
    static double nearestRank(double[] sorted, double q) {
        int rank = (int) Math.ceil(q * sorted.length);
        return sorted[Math.clamp(rank - 1, 0, sorted.length - 1)];
    }

    /** "90%", "99.9%": the percentile at {@code nines}, or "" between whole nines (no label there). */
    static String percentileLabel(double nines) {
        long whole = Math.round(nines);
        if (Math.abs(nines - whole) > 1e-6 || whole < 0) {
            return "";
        }
        if (whole == 0) {
            return "0%";
        }
        if (whole == 1) {
            return "90%";
        }
        String digits = "9".repeat((int) whole);
        return (whole == 2 ? digits : digits.substring(0, 2) + "." + digits.substring(2)) + "%";
    }
}
