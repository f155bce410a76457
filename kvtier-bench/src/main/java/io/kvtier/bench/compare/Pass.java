package io.kvtier.bench.compare;

import io.kvtier.bench.report.BenchResult;
import java.util.Objects;

/**
 * One measured pass: one system, one round, one workload run at one connection count (and, for {@code overflow},
 * one working-set factor; NaN otherwise). Immutable.
 */
public record Pass(Server server, int round, int connections, double factor, BenchResult result) {
    public Pass {
        Objects.requireNonNull(server, "server");
        Objects.requireNonNull(result, "result");
    }
}
