package io.kvtier.bench.workload;

import java.util.Map;

/** {@code setget} has no parameters of its own: value sizes, key space and limit are the run's options. */
public record SetGetSpec() implements WorkloadSpec {
    @Override
    public String name() {
        return "setget";
    }

    @Override
    public Map<String, String> parameters() {
        return Map.of();
    }
}
