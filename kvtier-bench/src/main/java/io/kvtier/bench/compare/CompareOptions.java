package io.kvtier.bench.compare;

import io.kvtier.bench.run.BenchOptions;
import io.kvtier.bench.workload.Bounds;
import io.kvtier.bench.workload.OverflowSpec;
import io.kvtier.common.Units;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * Everything one {@code kvtier bench compare} run needs, validated on construction; messages name the flag, the
 * value and the limit. Immutable.
 *
 * @param memory          memory cap of both servers (kvtier {@code --memory}, Redis {@code --maxmemory})
 * @param disk            kvtier's disk tier budget
 * @param rounds          A B rounds per case
 * @param duration        length of each measured setget/lmcache pass
 * @param serverWarmUp    untimed 1 MiB SET/GET load each server gets after it starts (kvtier's JIT compiles its data
 *                        path in the first seconds; Redis gets the same for fairness); zero for none
 * @param workloads       workloads to run, in order: setget, overflow, lmcache, small
 * @param valueSizes      setget value sizes
 * @param smallSizes      small's value sizes (redis-benchmark's {@code -d})
 * @param smallRequests   requests per small command without pipelining (x2 with {@code -P 16})
 * @param connections     connection counts
 * @param overflowFactor  overflow working set / memory cap
 * @param overflowSweep   also run overflow at the factors 0.5, 1 and 2 below {@code overflowFactor}
 * @param skipLimits      do not measure the machine's limits
 * @param outputDir       where compare.json, compare.csv and the charts go
 * @param launcher        kvtier's launcher script
 * @param seed            seed of every pseudo-random choice, the same for both systems
 */
public record CompareOptions(long memory, long disk, int rounds, Duration duration, Duration serverWarmUp,
        List<String> workloads,
        List<Integer> valueSizes, List<Integer> smallSizes, long smallRequests, List<Integer> connections, double overflowFactor, boolean overflowSweep,
        boolean skipLimits, Path outputDir, Path launcher, long seed) {

    public static final Set<String> WORKLOADS = Set.of("setget", "overflow", "lmcache", "small");
    /** redis-benchmark's -d takes at most 1 GB; a small value is a few KiB. */
    public static final int MAX_SMALL_SIZE = 1 << 20;
    public static final long MIN_MEMORY = 1L << 20;
    public static final long MAX_MEMORY = 1L << 40;
    public static final int MAX_ROUNDS = 100;
    public static final List<Double> SWEEP = List.of(0.5, 1.0, 2.0);
    /** Overflow values: the disk probe reads 1 MiB blocks, so disk-served GETs compare like with like. */
    public static final int OVERFLOW_VALUE_SIZE = 1 << 20;

    public CompareOptions {
        Bounds.checkBytes("--memory", memory, MIN_MEMORY, MAX_MEMORY);
        Bounds.checkBytes("--disk", disk, MIN_MEMORY, MAX_MEMORY << 4);
        Bounds.check("--rounds", rounds, 1, MAX_ROUNDS);
        Objects.requireNonNull(duration, "duration");
        if (duration.toMillis() < 1 || duration.compareTo(BenchOptions.MAX_DURATION) > 0) {
            throw new IllegalArgumentException("--duration " + duration.toMillis() + "ms is outside 1ms..24h");
        }
        Objects.requireNonNull(serverWarmUp, "serverWarmUp");
        if (serverWarmUp.isNegative() || serverWarmUp.compareTo(BenchOptions.MAX_DURATION) > 0
                || !serverWarmUp.isZero() && serverWarmUp.toMillis() < 2) {
            throw new IllegalArgumentException("--server-warmup " + serverWarmUp.toMillis()
                    + "ms is outside 0 or 2ms..24h (a SET pass and a GET pass of at least 1ms each)");
        }
        workloads = List.copyOf(workloads);
        if (workloads.isEmpty()) {
            throw new IllegalArgumentException("--workloads needs at least one of " + new TreeSet<>(WORKLOADS));
        }
        for (String w : workloads) {
            if (!WORKLOADS.contains(w)) {
                throw new IllegalArgumentException("--workloads " + w + " is not one of " + new TreeSet<>(WORKLOADS));
            }
        }
        valueSizes = List.copyOf(valueSizes);
        if (valueSizes.isEmpty() && workloads.contains("setget")) {
            throw new IllegalArgumentException("--value-sizes needs at least one size for setget");
        }
        long maxSize = Math.min(memory, BenchOptions.MAX_VALUE_SIZE);
        valueSizes.forEach(s -> Bounds.checkBytes("--value-sizes", s, 1, maxSize));
        smallSizes = List.copyOf(smallSizes);
        if (smallSizes.isEmpty() && workloads.contains("small")) {
            throw new IllegalArgumentException("--small-sizes needs at least one size for small");
        }
        smallSizes.forEach(s -> Bounds.checkBytes("--small-sizes", s, 1, MAX_SMALL_SIZE));
        if (smallRequests < 1 || smallRequests > 100_000_000) {
            throw new IllegalArgumentException("--small-requests " + smallRequests + " is outside 1..100000000");
        }
        connections = List.copyOf(connections);
        if (connections.isEmpty()) {
            throw new IllegalArgumentException("--connections needs at least one count");
        }
        connections.forEach(c -> Bounds.check("--connections", c, 1, BenchOptions.MAX_CONNECTIONS));
        new OverflowSpec(memory, overflowFactor).checkFits(OVERFLOW_VALUE_SIZE);
        if (workloads.contains("overflow") && overflowFactor * memory > disk) {
            throw new IllegalArgumentException("--overflow-factor " + overflowFactor + " x --memory "
                    + Units.bytes(memory) + " does not fit kvtier's --disk " + Units.bytes(disk)
                    + "; raise --disk or lower the factor");
        }
        Objects.requireNonNull(outputDir, "outputDir");
        Objects.requireNonNull(launcher, "launcher");
        if (!Files.isRegularFile(launcher) || !Files.isExecutable(launcher)) {
            throw new IllegalArgumentException("--kvtier-launcher " + launcher + " is not an executable file;"
                    + " give the path of kvtier's 'kvtier' script");
        }
    }

    /** The overflow factors to run, ascending: the sweep's below the configured one, then the configured one. */
    public List<Double> overflowFactors() {
        TreeSet<Double> factors = new TreeSet<>();
        if (overflowSweep) {
            SWEEP.stream().filter(f -> f < overflowFactor).forEach(factors::add);
        }
        factors.add(overflowFactor);
        return List.copyOf(factors);
    }

    /**
     * Distinct setget keys per size: as many as fill half the memory cap (at least one), so both systems serve
     * setget from memory and it measures the data path, not eviction; overflow measures eviction.
     */
    public long setGetKeys(int valueSize) {
        return Math.max(1, memory / 2 / valueSize);
    }

    /** The options as text, for the JSON report. */
    public Map<String, String> describe() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("memory", Units.bytes(memory));
        m.put("disk", Units.bytes(disk));
        m.put("rounds", Integer.toString(rounds));
        m.put("duration", duration.toMillis() + "ms");
        m.put("serverWarmUp", serverWarmUp.toMillis() + "ms");
        m.put("workloads", String.join(",", workloads));
        m.put("valueSizes", String.join(",", valueSizes.stream().map(s -> Units.bytes(s)).toList()));
        m.put("smallSizes", String.join(",", smallSizes.stream().map(s -> Units.bytes(s)).toList()));
        m.put("smallRequests", Long.toString(smallRequests));
        m.put("connections", String.join(",", connections.stream().map(String::valueOf).toList()));
        m.put("overflowFactors", String.join(",", overflowFactors().stream().map(String::valueOf).toList()));
        m.put("overflowValueSize", Units.bytes(OVERFLOW_VALUE_SIZE));
        m.put("skipLimits", Boolean.toString(skipLimits));
        m.put("launcher", launcher.toString());
        m.put("seed", Long.toString(seed));
        return m;
    }
}
