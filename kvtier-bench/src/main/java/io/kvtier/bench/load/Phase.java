package io.kvtier.bench.load;

import java.util.List;
import java.util.Objects;

/**
 * One measured stretch of a workload, e.g. the GET pass of {@code setget} at 1 MiB. Immutable.
 *
 * @param workload  workload name, for the results
 * @param valueSize value size in bytes, for the results
 * @param label     what the progress bar shows
 * @param ops       the operations its tasks record, in report order
 * @param limit     how many requests, or how long
 * @param tasks     the requests
 */
public record Phase(String workload, long valueSize, String label, List<String> ops, Limit limit, TaskSource tasks) {
    public Phase {
        Objects.requireNonNull(workload, "workload");
        Objects.requireNonNull(label, "label");
        Objects.requireNonNull(limit, "limit");
        Objects.requireNonNull(tasks, "tasks");
        ops = List.copyOf(ops);
    }
}
