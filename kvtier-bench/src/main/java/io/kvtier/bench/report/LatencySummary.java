package io.kvtier.bench.report;

/** Latency figures of one operation, in milliseconds; NaN when no request succeeded. Immutable. */
public record LatencySummary(double p50, double p90, double p99, double p999, double max, double mean) {
    public static final LatencySummary EMPTY =
            new LatencySummary(Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN);
}
