package io.kvtier.bench.workload;

import io.kvtier.bench.load.PhaseRunner;

/** A benchmark workload: a sequence of phases, each possibly shaped by the one before. Run from one thread. */
public interface Workload {
    String name();

    /** Runs every phase, in order, through the runner (which collects the results). */
    void run(PhaseRunner runner);
}
