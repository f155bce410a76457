package io.kvtier.bench;

import io.kvtier.bench.compare.CompareOptions;
import io.kvtier.bench.compare.CompareRun;
import io.kvtier.bench.compare.Launcher;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kvtier bench compare}: kvtier against redis-server with the same memory cap, in one run. Maps its flags to
 * {@link CompareOptions}; exit code 0, or 1 when a kvtier pass saw errors or wrong bytes (the reference's errors are
 * reported in the table, not a failure).
 */
@Command(name = "compare", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Start kvtier and redis-server (from PATH) with the same memory cap, run the same workloads "
                + "against both alternately (A B A B, FLUSHALL before each pass, same seed), and print kvtier/Redis "
                + "ratios and kvtier's figures as %% of this machine's measured limits; writes compare.json, "
                + "compare.csv and PNG/SVG charts.",
            "Example: kvtier bench compare --memory 256m --duration 2s --rounds 1 --value-sizes 1m,4m "
                + "--connections 4 --out /tmp/cmp"})
final class CompareCommand implements Callable<Integer> {
    @Option(names = "--memory", paramLabel = "SIZE", defaultValue = "1g", converter = FlagValues.SizeConverter.class,
            description = "Memory cap of both servers: kvtier --memory, Redis --maxmemory with allkeys-lru "
                    + "(default: ${DEFAULT-VALUE}).")
    long memory;

    @Option(names = "--disk", paramLabel = "SIZE", defaultValue = "8g", converter = FlagValues.SizeConverter.class,
            description = "kvtier's disk tier budget (default: ${DEFAULT-VALUE}).")
    long disk;

    @Option(names = "--rounds", paramLabel = "N", defaultValue = "2",
            description = "Rounds: each runs every case on kvtier, then on Redis (default: ${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--duration", paramLabel = "DURATION", defaultValue = "5s",
            converter = FlagValues.DurationConverter.class,
            description = "Length of each measured setget/lmcache pass (default: ${DEFAULT-VALUE}).")
    Duration duration;

    @Option(names = "--server-warmup", paramLabel = "DURATION", defaultValue = "10s",
            converter = FlagValues.DurationConverter.class,
            description = "Untimed 1 MiB SET/GET load each server gets once it has started, before any measured pass:"
                    + " kvtier's JIT compiles its data path in the first seconds (0 = none; default: ${DEFAULT-VALUE}).")
    Duration serverWarmUp;

    @Option(names = "--workloads", paramLabel = "LIST", split = ",", defaultValue = "setget,overflow",
            description = "Workloads, from setget, overflow, lmcache, small (redis-benchmark's small-value commands,"
                    + " redis-benchmark from PATH; default: ${DEFAULT-VALUE}).")
    List<String> workloads;

    @Option(names = {"-s", "--value-sizes"}, paramLabel = "SIZES", split = ",", defaultValue = "256k,1m,4m,32m",
            converter = FlagValues.SizeConverter.class,
            description = "setget value sizes (default: ${DEFAULT-VALUE}).")
    List<Long> valueSizes;

    @Option(names = "--small-sizes", paramLabel = "SIZES", split = ",", defaultValue = "100,4k",
            converter = FlagValues.SizeConverter.class,
            description = "Value sizes of the small workload, redis-benchmark's -d (default: ${DEFAULT-VALUE}).")
    List<Long> smallSizes;

    @Option(names = "--small-requests", paramLabel = "N", defaultValue = "100000",
            description = "Requests per small-workload command without pipelining; x2 with -P 16"
                    + " (default: ${DEFAULT-VALUE}).")
    long smallRequests;

    @Option(names = {"-c", "--connections"}, paramLabel = "LIST", split = ",", defaultValue = "4,16",
            description = "Connection counts; overflow runs at the largest (default: ${DEFAULT-VALUE}).")
    List<Integer> connections;

    @Option(names = "--overflow-factor", paramLabel = "K", defaultValue = "4",
            description = "overflow working set / memory cap (default: ${DEFAULT-VALUE}).")
    double overflowFactor;

    @Option(names = "--overflow-sweep", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "Also run overflow at 0.5x, 1x and 2x (those below --overflow-factor), for the hit-rate "
                    + "chart (default: ${DEFAULT-VALUE}; --no-overflow-sweep for the factor alone).")
    boolean overflowSweep;

    @Option(names = "--skip-limits", defaultValue = "false",
            description = "Do not measure this machine's limits (saves about 14 s; no %% of limit).")
    boolean skipLimits;

    @Option(names = "--seed", paramLabel = "N", defaultValue = "1",
            description = "Seed of every pseudo-random choice, the same for both systems (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = {"-o", "--out"}, paramLabel = "DIR", defaultValue = "bench-results/compare",
            description = "Directory for compare.json, compare.csv and the charts (default: ${DEFAULT-VALUE}).")
    Path outputDir;

    @Option(names = "--kvtier-launcher", paramLabel = "PATH",
            description = "kvtier's launcher script (default: the executable 'kvtier' above the running jar).")
    Path launcher;

    CompareOptions options() {
        return new CompareOptions(memory, disk, rounds, duration, serverWarmUp, workloads,
                WorkloadCommand.sizes("--value-sizes", valueSizes), WorkloadCommand.sizes("--small-sizes", smallSizes),
                smallRequests, connections, overflowFactor, overflowSweep,
                skipLimits, outputDir, launcher != null ? launcher : Launcher.discover(), seed);
    }

    @Override
    public Integer call() throws Exception {
        return CompareRun.execute(options(), System.out).failed() ? 1 : 0;
    }
}
