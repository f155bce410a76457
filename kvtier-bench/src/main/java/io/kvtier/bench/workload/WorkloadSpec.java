package io.kvtier.bench.workload;

import java.util.Map;

/** The parameters that only one workload has; the shared ones live in the run's options. Immutable. */
public sealed interface WorkloadSpec permits SetGetSpec, LmcacheSpec, OverflowSpec {
    String name();

    /** The parameters as text, for the result file. */
    Map<String, String> parameters();
}
