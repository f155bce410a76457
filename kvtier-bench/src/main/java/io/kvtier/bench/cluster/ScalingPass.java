package io.kvtier.bench.cluster;

import io.kvtier.bench.report.BenchResult;
import java.util.Objects;

/** One measured setget pass of the scaling comparison: a cluster size, a round, what it measured. Immutable. */
public record ScalingPass(int nodes, int round, BenchResult result) {
    public ScalingPass {
        Objects.requireNonNull(result, "result");
    }
}
