package io.kvtier.bench.workload;

import io.kvtier.common.Units;
import java.util.Map;

/**
 * {@code overflow}: the server's memory budget and how many times larger the working set is. Immutable, validated.
 *
 * @param memoryBudget the server's memory budget in bytes ({@code --memory-budget})
 * @param factor       working set / memory budget ({@code --factor})
 */
public record OverflowSpec(long memoryBudget, double factor) implements WorkloadSpec {
    public static final long MIN_BUDGET = 1024;
    public static final long MAX_BUDGET = 1L << 50;
    public static final double MIN_FACTOR = 0.01;
    public static final double MAX_FACTOR = 1000;
    /** Largest working set in values, so the read order fits in memory. */
    public static final long MAX_KEYS = 100_000_000;

    public OverflowSpec {
        Bounds.checkBytes("--memory-budget", memoryBudget, MIN_BUDGET, MAX_BUDGET);
        Bounds.check("--factor", factor, MIN_FACTOR, MAX_FACTOR);
    }

    /** Throws, naming the flags, when the working set is more than {@value #MAX_KEYS} values of this size. */
    public void checkFits(int valueSize) {
        long keys = keys(valueSize);
        if (keys > MAX_KEYS) {
            throw new IllegalArgumentException("--factor " + factor + " x --memory-budget " + Units.bytes(memoryBudget)
                    + " is " + keys + " values of " + Units.bytes(valueSize) + ", above the maximum " + MAX_KEYS
                    + "; use a larger --value-size");
        }
    }

    /** Values of {@code valueSize} bytes that make up the working set (at least one). */
    public long keys(int valueSize) {
        return Math.max(1, (long) Math.ceil(factor * memoryBudget / valueSize));
    }

    @Override
    public String name() {
        return "overflow";
    }

    @Override
    public Map<String, String> parameters() {
        return Map.of("memoryBudget", Units.bytes(memoryBudget), "factor", Double.toString(factor));
    }
}
