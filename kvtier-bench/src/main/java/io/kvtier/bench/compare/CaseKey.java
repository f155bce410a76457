package io.kvtier.bench.compare;

import java.util.Objects;

/**
 * One compared cell: (workload, value size, operation, connections) and, for {@code overflow}, the working set as a
 * multiple of the memory cap ({@code factor}; NaN for other workloads). Immutable.
 */
public record CaseKey(String workload, long valueSize, String op, int connections, double factor) {
    public CaseKey {
        Objects.requireNonNull(workload, "workload");
        Objects.requireNonNull(op, "op");
    }

    public boolean isOverflow() {
        return !Double.isNaN(factor);
    }
}
