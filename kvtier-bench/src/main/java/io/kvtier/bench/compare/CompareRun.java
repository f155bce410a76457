package io.kvtier.bench.compare;

import io.kvtier.bench.limits.LimitsOptions;
import io.kvtier.bench.limits.MachineLimits;
import io.kvtier.bench.limits.MachineLimitsResult;
import io.kvtier.bench.load.Limit;
import io.kvtier.bench.report.BenchResult;
import io.kvtier.bench.report.OpResult;
import io.kvtier.bench.report.ProgressListener;
import io.kvtier.bench.run.BenchOptions;
import io.kvtier.bench.run.BenchRun;
import io.kvtier.bench.workload.LmcacheSpec;
import io.kvtier.bench.workload.OverflowSpec;
import io.kvtier.bench.workload.SetGetSpec;
import io.kvtier.common.Units;
import io.kvtier.common.chart.ChartFiles;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Runs one comparison: measures the machine's limits (before the servers start, so they measure the machine
 * alone), starts kvtier and redis-server on free loopback ports with data in a temp dir, then for each case runs
 * kvtier and Redis alternately, round after round, each pass on an emptied server (FLUSHALL) with the same seed;
 * then prints the table and writes the JSON, CSV and charts. The servers and the temp dir are always removed, by a
 * shutdown hook too (Ctrl-C). Runs on the calling thread.
 */
public final class CompareRun {
    private static final Duration START_TIMEOUT = Duration.ofSeconds(120);
    private static final Duration MAX_WARM_UP = Duration.ofSeconds(1);
    private static final int WARM_UP_VALUE_SIZE = 1 << 20;

    private final CompareOptions options;
    private final PrintStream out;
    private final List<Pass> passes = new ArrayList<>();
    private int passNumber;

    private CompareRun(CompareOptions options, PrintStream out) {
        this.options = options;
        this.out = out;
    }

    /**
     * What a run produced. {@code failed} is true when a kvtier pass saw errors or wrong bytes; errors of the
     * reference (Redis refusing writes over its memory cap, say) are part of what the comparison reports, not a
     * failure of the run.
     */
    public record Outcome(List<Comparison> comparisons, Optional<MachineLimitsResult> limits, List<Pass> passes,
            List<ChartFiles> charts, boolean failed) {}

    public static Outcome execute(CompareOptions options, PrintStream out) throws IOException, InterruptedException {
        return new CompareRun(options, out).run();
    }

    private Outcome run() throws IOException, InterruptedException {
        Path scratch = Files.createTempDirectory("kvtier-compare-");
        Cleanup<ServerProcess> cleanup = new Cleanup<>(scratch, ServerProcess::close);
        Thread hook = new Thread(cleanup::run, "kvtier-compare-cleanup");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            Optional<MachineLimitsResult> limits = measureLimits(scratch);
            ServerProcess kvtier = cleanup.add(startKvtier(scratch));
            ServerProcess redis = cleanup.add(startRedis(scratch));
            out.printf("kvtier on port %d, Redis on port %d, memory cap %s each%n", kvtier.port(), redis.port(),
                    Units.bytes(options.memory()));
            warmUp(kvtier, redis, scratch);
            runAll(kvtier, redis, scratch);
            return report(limits);
        } finally {
            cleanup.run();
            Runtime.getRuntime().removeShutdownHook(hook);
        }
    }

    private Optional<MachineLimitsResult> measureLimits(Path scratch) throws IOException, InterruptedException {
        if (options.skipLimits()) {
            return Optional.empty();
        }
        out.println("measuring this machine's limits (about 14 s) ...");
        MachineLimitsResult limits = MachineLimits.measure(scratch.resolve("limits"), LimitsOptions.DEFAULTS);
        limits.summaryLines().forEach(line -> out.println("limit: " + line));
        return Optional.of(limits);
    }

    private ServerProcess startKvtier(Path scratch) throws IOException, InterruptedException {
        Path dir = Files.createDirectories(scratch.resolve("kvtier-data"));
        int port = ServerProcess.freePort();
        return ServerProcess.start("kvtier", List.of(options.launcher().toString(), "server", "--port",
                        Integer.toString(port), "--dir", dir.toString(), "--memory", Long.toString(options.memory()),
                        "--disk", Long.toString(options.disk())), port, scratch.resolve("kvtier.log"),
                START_TIMEOUT);
    }

    private ServerProcess startRedis(Path scratch) throws IOException, InterruptedException {
        Path dir = Files.createDirectories(scratch.resolve("redis-data"));
        int port = ServerProcess.freePort();
        return ServerProcess.start("redis-server", List.of("redis-server", "--port", Integer.toString(port),
                "--bind", "127.0.0.1", "--dir", dir.toString(), "--maxmemory", Long.toString(options.memory()),
                "--maxmemory-policy", "allkeys-lru", "--save", "", "--appendonly", "no", "--daemonize", "no"),
                port, scratch.resolve("redis.log"), START_TIMEOUT);
    }

    /** Untimed load on each server, so that no measured pass runs while kvtier's JIT still compiles its data path. */
    private void warmUp(ServerProcess kvtier, ServerProcess redis, Path scratch) throws IOException {
        if (options.serverWarmUp().isZero()) {
            return;
        }
        out.printf(Locale.ROOT, "warming up both servers (%.1f s each, not measured) ...%n",
                options.serverWarmUp().toMillis() / 1000.0);
        int conns = options.connections().stream().max(Comparator.naturalOrder()).orElseThrow();
        Duration pass = options.serverWarmUp().dividedBy(2); // a SET pass, then a GET pass
        for (ServerProcess server : List.of(kvtier, redis)) {
            server.flushAll();
            BenchOptions o = setGet(WARM_UP_VALUE_SIZE, conns, scratch).warmUp(Limit.none())
                    .limit(new Limit.Timed(pass)).port(server.port()).build();
            BenchRun.measure(o, ProgressListener.NONE);
        }
    }

    private void runAll(ServerProcess kvtier, ServerProcess redis, Path scratch) throws IOException {
        for (String workload : options.workloads()) {
            switch (workload) {
                case "setget" -> {
                    for (int size : options.valueSizes()) {
                        for (int conns : options.connections()) {
                            rounds(kvtier, redis, conns, Double.NaN, setGet(size, conns, scratch));
                        }
                    }
                }
                case "overflow" -> {
                    int conns = options.connections().stream().max(Comparator.naturalOrder()).orElseThrow();
                    for (double factor : options.overflowFactors()) {
                        rounds(kvtier, redis, conns, factor, overflow(factor, conns, scratch));
                    }
                }
                case "lmcache" -> {
                    for (int conns : options.connections()) {
                        rounds(kvtier, redis, conns, Double.NaN, lmcache(conns, scratch));
                    }
                }
                case "small" -> {
                    for (int size : options.smallSizes()) {
                        for (int pipeline : SmallValues.PIPELINES) {
                            smallRounds(kvtier, redis, size, pipeline, scratch);
                        }
                    }
                }
                default -> throw new IllegalStateException("unknown workload " + workload);
            }
        }
    }

    /** A B A B: each round runs kvtier, then Redis, each on an emptied server. */
    private void rounds(ServerProcess kvtier, ServerProcess redis, int conns, double factor,
            BenchOptions.Builder builder) throws IOException {
        BenchOptions shape = builder.port(kvtier.port()).build();
        rounds(kvtier, redis, conns, factor, shape.workload().name() + " " + shape.valueSizesText(), false,
                server -> BenchRun.measure(builder.port(server.port()).build(), ProgressListener.NONE));
    }

    /** As above, for the small workload: redis-benchmark's passes, reported in requests per second. */
    private void smallRounds(ServerProcess kvtier, ServerProcess redis, int size, int pipeline, Path scratch)
            throws IOException {
        rounds(kvtier, redis, SmallValues.CONNECTIONS, Double.NaN, "small " + Units.bytes(size) + " P" + pipeline, true,
                server -> SmallValues.run(server.port(), size, pipeline, options.smallRequests(), options.seed(),
                        scratch));
    }

    /** One pass against one server. */
    @FunctionalInterface
    private interface Measure {
        BenchResult on(ServerProcess server) throws IOException;
    }

    /** A B A B with {@code measure}; each pass printed as {@code what}, per op in requests/s or MB/s. */
    private void rounds(ServerProcess kvtier, ServerProcess redis, int conns, double factor, String what,
            boolean requestsPerSecond, Measure measure) throws IOException {
        for (int round = 1; round <= options.rounds(); round++) {
            for (ServerProcess server : List.of(kvtier, redis)) {
                Server system = server == kvtier ? Server.KVTIER : Server.REDIS;
                server.flushAll();
                BenchResult result = measure.on(server);
                passes.add(new Pass(system, round, conns, factor, result));
                progress(system, round, what, conns, requestsPerSecond, result);
            }
        }
    }

    private void progress(Server system, int round, String what, int conns, boolean requestsPerSecond,
            BenchResult result) {
        StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "pass %d: %-6s round %d %s c=%d:",
                ++passNumber, system.label(), round, what, conns));
        for (OpResult r : result.results()) {
            line.append(requestsPerSecond ? String.format(Locale.ROOT, " %s %.0f/s", r.op(), r.opsPerSec())
                    : String.format(Locale.ROOT, " %s %.0f MB/s", r.op(), r.mbPerSec()));
            if (r.errors() > 0) {
                line.append(" (").append(r.errors()).append(" errors: ").append(r.firstError()).append(')');
            }
        }
        out.println(line);
    }

    private BenchOptions.Builder common(BenchOptions.Builder b, int conns, Path scratch) {
        Duration warmUp = options.duration().compareTo(MAX_WARM_UP) < 0 ? options.duration() : MAX_WARM_UP;
        return b.connections(conns).seed(options.seed()).warmUp(new Limit.Timed(warmUp))
                .limit(new Limit.Timed(options.duration())).outputDir(scratch);
    }

    private BenchOptions.Builder setGet(int size, int conns, Path scratch) {
        return common(BenchOptions.builder(new SetGetSpec()), conns, scratch).valueSizes(List.of(size))
                .keySpace(options.setGetKeys(size));
    }

    private BenchOptions.Builder overflow(double factor, int conns, Path scratch) {
        OverflowSpec spec = new OverflowSpec(options.memory(), factor);
        return common(BenchOptions.builder(spec), conns, scratch)
                .valueSizes(List.of(CompareOptions.OVERFLOW_VALUE_SIZE))
                .limit(new Limit.Requests(spec.keys(CompareOptions.OVERFLOW_VALUE_SIZE)));
    }

    /** LMCache's defaults with 1 MiB chunks, as the quick setting of {@code kvtier bench lmcache}. */
    private BenchOptions.Builder lmcache(int conns, Path scratch) {
        LmcacheSpec spec = new LmcacheSpec("meta-llama/Meta-Llama-3-8B-Instruct", "", 256, 1 << 20, 1024, 1, 64,
                1.0, 128, 256, 8192, "metadata");
        return common(BenchOptions.builder(spec), conns, scratch);
    }

    private Outcome report(Optional<MachineLimitsResult> limits) throws IOException {
        List<Comparison> comparisons = Comparisons.of(passes);
        out.println();
        CompareTable.print(comparisons, limits, out);
        CompareReport.write(options.outputDir(), options.describe(), limits, passes, comparisons);
        List<ChartFiles> charts = CompareCharts.write(options.outputDir(), comparisons, limits);
        out.println("wrote " + options.outputDir().resolve("compare.json") + ", compare.csv and " + charts.size()
                + " charts (PNG + SVG)");
        boolean failed = passes.stream().anyMatch(p -> p.server() == Server.KVTIER && p.result().failed());
        return new Outcome(comparisons, limits, List.copyOf(passes), charts, failed);
    }
}
