package io.kvtier.bench.load;

import io.kvtier.bench.report.OpResult;
import java.util.List;
import java.util.Map;

/**
 * What a phase measured: its length, how many tasks ran, and the merged statistics of every lane. Immutable once
 * returned by the runner.
 */
public record PhaseOutcome(Phase phase, long elapsedNanos, long tasks, Map<String, OpStats> stats) {
    public PhaseOutcome {
        stats = Map.copyOf(stats);
    }

    public double seconds() {
        return elapsedNanos / 1e9;
    }

    /** One result row per declared operation, in the phase's order. */
    public List<OpResult> results() {
        return phase.ops().stream()
                .map(op -> stats.get(op).toResult(phase.workload(), phase.valueSize(), op, seconds()))
                .toList();
    }
}
