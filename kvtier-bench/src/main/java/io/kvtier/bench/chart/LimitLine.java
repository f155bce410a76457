package io.kvtier.bench.chart;

/**
 * A horizontal reference line on a throughput chart, such as a measured machine limit, in GB/s (10^9 bytes per
 * second).
 */
public record LimitLine(String label, double gbPerSecond) {
    public LimitLine {
        if (label == null || label.isBlank()) {
            throw new IllegalArgumentException("a limit line needs a label");
        }
        if (!(gbPerSecond > 0) || Double.isInfinite(gbPerSecond)) {
            throw new IllegalArgumentException("limit line \"" + label + "\" at " + gbPerSecond
                    + " GB/s must be positive and finite");
        }
    }
}
