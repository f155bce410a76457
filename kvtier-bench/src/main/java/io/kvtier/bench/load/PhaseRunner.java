package io.kvtier.bench.load;

/** Runs phases one after the other; what workloads are given. Called from one thread. */
@FunctionalInterface
public interface PhaseRunner {
    /** Runs the phase to its limit (or until its tasks run out) and returns what it measured. */
    PhaseOutcome run(Phase phase);
}
