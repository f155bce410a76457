package io.kvtier.bench.report;

import java.util.List;
import java.util.Objects;

/**
 * Everything one {@code kvtier bench} run measured: how it ran and one {@link OpResult} per (workload, value size,
 * operation). Written as JSON and CSV by {@link BenchResultJson} and {@link CsvReport}, and read back from JSON for
 * comparisons. Immutable.
 */
public record BenchResult(RunInfo run, List<OpResult> results) {

    public BenchResult {
        Objects.requireNonNull(run, "run");
        results = List.copyOf(results);
    }

    /** True when any operation saw an error or wrong bytes: the run's exit code is then 1. */
    public boolean failed() {
        return results.stream().anyMatch(OpResult::failed);
    }

    public long errors() {
        return results.stream().mapToLong(OpResult::errors).sum();
    }

    public long wrongBytes() {
        return results.stream().mapToLong(OpResult::wrongBytes).sum();
    }
}
