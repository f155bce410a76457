package io.kvtier.bench.chart;

/** A labelled vertical line on a time chart, such as "kill -9 n2" at 10 s. Immutable. */
public record Marker(double x, String label) {
    public Marker {
        if (label == null || label.isBlank()) {
            throw new IllegalArgumentException("a marker needs a label");
        }
        if (!Double.isFinite(x)) {
            throw new IllegalArgumentException("marker \"" + label + "\" at " + x + " must be finite");
        }
    }
}
