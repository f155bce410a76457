package io.kvtier.bench;

import io.kvtier.bench.compare.Launcher;
import io.kvtier.bench.fleet.FleetCharts;
import io.kvtier.bench.fleet.FleetOptions;
import io.kvtier.bench.fleet.FleetPoint;
import io.kvtier.bench.fleet.FleetReport;
import io.kvtier.bench.fleet.FleetRun;
import io.kvtier.bench.fleet.MultiRoundQa;
import io.kvtier.kvcache.sizing.ModelTable;
import io.kvtier.router.sim.Gpu;
import io.kvtier.router.sim.ModeledEngine;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code kvtier bench fleet}: emulated vLLM engines whose GPU time is modeled (a roofline of the GPU, vLLM's scheduler)
 * and everything else real, driven at a sweep of rates with and without kvtier (DRAM, DRAM + SSD) and a router. Maps
 * its flags to {@link FleetOptions}; writes fleet.json, fleet.csv, fleet.txt and the charts. See docs/fleet.md.
 */
@Command(name = "fleet", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Start --engines emulated vLLM engines (a roofline of --gpu for --model, vLLM's continuous "
                + "batching and prefix caching; real HTTP, KV events and RESP) with no offload, with kvtier in DRAM "
                + "and with kvtier in DRAM + SSD (LMCache's offload path, real chunk bytes), directly or through "
                + "`kvtier router` with each --routing policy, and drive them at each of --rates with multi-round "
                + "chats (LMCache's multi-round QA shape) or a Mooncake trace. Reports TTFT, TPOT, tokens/s per user, "
                + "requests/s per GPU and hit rates by tier per point; writes fleet.txt, fleet.json, fleet.csv and "
                + "PNG/SVG charts. See docs/fleet.md.",
            "Example: kvtier bench fleet --gpu l4 --engines 4 --rates 0.5,1,2 --duration 60s --out /tmp/fleet"})
final class FleetCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--model", defaultValue = "meta-llama/Llama-3.1-8B-Instruct",
            description = "Model, from `kvtier size`'s table (short name or Hugging Face id; dense models) "
                    + "(default: ${DEFAULT-VALUE}).")
    String model;

    @Option(names = "--gpu", defaultValue = "l4", description = "GPU modeled: l4, a100, h100, h200 (default: "
            + "${DEFAULT-VALUE}).")
    String gpu;

    @Option(names = "--gpu-calibration", paramLabel = "FILE", description = "What bench/gpu-calibrate.py measured "
            + "on this GPU (its JSON): the roofline takes its compute efficiency and the CPU tiers its pinned "
            + "host-to-device rate (default: the datasheet and published anchors, docs/fleet.md).")
    java.nio.file.Path gpuCalibration;

    @Option(names = "--tp", defaultValue = "1", description = "Tensor parallelism per engine (default: ${DEFAULT-VALUE}).")
    int tp;

    @Option(names = "--engines", defaultValue = "4", description = "Engines in the fleet (default: ${DEFAULT-VALUE}).")
    int engines;

    @Option(names = "--max-seqs", defaultValue = "256", description = "vLLM's max_num_seqs (default: ${DEFAULT-VALUE}).")
    int maxSeqs;

    @Option(names = "--max-batched-tokens", defaultValue = "8192",
            description = "vLLM's max_num_batched_tokens (default: ${DEFAULT-VALUE}).")
    int maxBatchedTokens;

    @Option(names = "--gpu-memory-utilization", defaultValue = "0.9",
            description = "vLLM's gpu_memory_utilization (default: ${DEFAULT-VALUE}).")
    double memoryUtilization;

    @Option(names = "--offload", split = ",", defaultValue = "none,dram,dram+ssd",
            description = "Offload configurations: none, dram, dram+ssd, dram-shm (dram, the engines moving chunk "
                    + "bytes through the node's shared memory as engines on its host would; one node), and the "
                    + "baselines vllm-cpu (vLLM's native CPU offloading: each engine's own CPU memory, --kvtier-memory "
                    + "split between them, loaded asynchronously at the GPU's host link rate) and lmcache-cpu "
                    + "(LMCache's local CPU tier, the same memory, loaded per --load-mode) (default: ${DEFAULT-VALUE}).")
    List<String> offloads;

    @Option(names = "--port-range", paramLabel = "LOW-HIGH",
            description = "Ports for every process the run starts (kvtier nodes and their events, engines and their "
                    + "events, the router), e.g. 40000-41000 (default: 20000-32099, below the kernel's ephemeral "
                    + "ports).")
    String portRange;

    @Option(names = "--load-mode", defaultValue = "sync",
            description = io.kvtier.router.sim.LoadMode.FLAG_DESCRIPTION)
    String loadMode;

    @Option(names = "--routing", split = ",", defaultValue = "direct",
            description = "direct (the client picks an engine at random for each request, as a Kubernetes Service "
                    + "spreads them) or router policies: round-robin, least-load, prefix, approx-prefix, llmd, "
                    + "dynamo, kvtier "
                    + "(default: ${DEFAULT-VALUE}).")
    List<String> routings;

    @Option(names = "--rates", split = ",", defaultValue = "0.5,1,2",
            description = "The sweep: requests/s over the fleet for chats, the speed-up of a --trace "
                    + "(default: ${DEFAULT-VALUE}).")
    List<Double> rates;

    @Option(names = "--trace", paramLabel = "FILE",
            description = "Replay this Mooncake-format trace (JSON lines) on its timestamps instead of chats.")
    Path trace;

    @Option(names = "--users", defaultValue = "16", description = "Chat users active at once (default: ${DEFAULT-VALUE}).")
    int users;

    @Option(names = "--rounds", defaultValue = "6", description = "Rounds per user (default: ${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--system-prompt", defaultValue = "1000",
            description = "Tokens of the system prompt all users share (default: ${DEFAULT-VALUE}).")
    int systemPrompt;

    @Option(names = "--system-prompts", defaultValue = "1",
            description = "Tenants, each with a system prompt of its own of --system-prompt tokens, users drawn among "
                    + "them by --tenant-skew (default: ${DEFAULT-VALUE}: one prompt all users share).")
    int systemPrompts;

    @Option(names = "--tenant-skew", defaultValue = "1.0",
            description = "Zipf exponent of the tenants' popularity: tenant k is drawn with weight 1/(k+1)^S; 0 makes "
                    + "all equally popular (default: ${DEFAULT-VALUE}).")
    double tenantSkew;

    @Option(names = "--history", defaultValue = "2000",
            description = "Tokens of context each user's first question carries (default: ${DEFAULT-VALUE}).")
    int history;

    @Option(names = "--question", defaultValue = "50", description = "Tokens per question (default: ${DEFAULT-VALUE}).")
    int question;

    @Option(names = "--answer", defaultValue = "100",
            description = "Tokens per answer, max_tokens (default: ${DEFAULT-VALUE}).")
    int answer;

    @Option(names = "--duration", defaultValue = "60s", converter = FlagValues.DurationConverter.class,
            description = "Length of each point (default: ${DEFAULT-VALUE}).")
    Duration duration;

    @Option(names = "--warm-up", defaultValue = "15s", converter = FlagValues.DurationConverter.class,
            description = "Requests sent in this first part of a point are not counted (default: ${DEFAULT-VALUE}).")
    Duration warmUp;

    @Option(names = "--drain", defaultValue = "60s", converter = FlagValues.DurationConverter.class,
            description = "Time requests still running at the end get to finish (default: ${DEFAULT-VALUE}).")
    Duration drain;

    @Option(names = "--kvtier-nodes", defaultValue = "1",
            description = "kvtier nodes: 1 is one node (LMCache's redis://); more form a cluster with one backup per "
                    + "slot, which the engines reach as redis-cluster:// (default: ${DEFAULT-VALUE}).")
    int kvtierNodes;

    @Option(names = "--kvtier-failure-timeout", defaultValue = "5s", converter = FlagValues.DurationConverter.class,
            description = "A cluster's kvtier server --failure-timeout (default: ${DEFAULT-VALUE}, the server's).")
    Duration failureTimeout;

    @Option(names = "--kvtier-memory", defaultValue = "8g", converter = FlagValues.SizeConverter.class,
            description = "Each kvtier node's memory tier, in real KV bytes (default: ${DEFAULT-VALUE}).")
    long memory;

    @Option(names = "--kvtier-disk", defaultValue = "64g", converter = FlagValues.SizeConverter.class,
            description = "Each kvtier node's disk tier for dram+ssd, in real KV bytes (default: ${DEFAULT-VALUE}).")
    long disk;

    @Option(names = "--keep-page-cache",
            description = "Leave kvtier's disk files in the OS page cache. By default they are dropped from it every "
                    + "0.5 s (posix_fadvise), so that disk-tier hits are reads from the disk: a scaled-down disk tier "
                    + "(--kv-bytes-scale) would otherwise fit in this machine's page cache.")
    boolean keepPageCache;

    @Option(names = "--router-prefetch", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "With --routing kvtier: the router sends KVC.PREFETCH for the disk chunks of each request "
                    + "it routes (its default); --no-router-prefetch measures without it.")
    boolean routerPrefetch;

    @Option(names = "--kv-bytes-scale", defaultValue = "1",
            description = "Share of each chunk's bytes actually moved; a load's measured time is divided by it and "
                    + "kvtier's budgets scaled with it, for machines that cannot move a fleet's real bytes "
                    + "(default: ${DEFAULT-VALUE}: all).")
    double bytesScale;

    @Option(names = "--lmcache-chunk-size", defaultValue = "256",
            description = "LMCache's chunk size in tokens (default: ${DEFAULT-VALUE}).")
    int chunkTokens;

    @Option(names = "--kill-kvtier-after", converter = FlagValues.DurationConverter.class,
            description = "Kill a kvtier node (SIGKILL; a cluster's last) this long into every point with offload: "
                    + "what the fleet does without it, or while a cluster fails over.")
    Duration killAfter;

    @Option(names = "--request-timeout", defaultValue = "300s", converter = FlagValues.DurationConverter.class,
            description = "Longest a request may take (default: ${DEFAULT-VALUE}).")
    Duration requestTimeout;

    @Option(names = "--seed", defaultValue = "1", description = "Seed of the prompts (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = {"-o", "--out"}, paramLabel = "DIR", defaultValue = "bench-results/fleet",
            description = "Directory for fleet.txt, fleet.json, fleet.csv and the charts (default: ${DEFAULT-VALUE}).")
    Path out;

    @Option(names = "--charts-from", paramLabel = "FILE", split = ",",
            description = "Run nothing: draw the table and charts of these fleet.json files (earlier runs) together "
                    + "into --out, one line per configuration, e.g. a run of each --offload beside a run of each "
                    + "--routing.")
    List<Path> chartsFrom = List.of();

    @Option(names = "--kvtier-launcher", paramLabel = "PATH",
            description = "kvtier's launcher script (default: the executable 'kvtier' above the running jar).")
    Path launcher;

    FleetOptions options() throws java.io.IOException {
        var spec = ModelTable.find(model);
        Gpu modeled = Gpu.parse(gpu);
        ModeledEngine engine = new ModeledEngine(spec, modeled, tp, memoryUtilization, 2L << 30, 16, maxSeqs,
                maxBatchedTokens, gpuCalibration == null ? null
                        : io.kvtier.router.sim.GpuCalibration.read(gpuCalibration, modeled));
        engine.hbm().blocks(); // the model fits, or a clear error now
        String served = ModelTable.entries().stream().filter(e -> e.spec() == spec).map(ModelTable.Entry::hfId)
                .findFirst().orElse(model);
        MultiRoundQa.Options qa = new MultiRoundQa.Options(users, rounds, systemPrompt, history, question, answer,
                rates.getFirst(), seed, 0, systemPrompts, tenantSkew);
        return new FleetOptions(engine, served, engines, offloads, routings, rates, trace, qa, warmUp, duration, drain,
                kvtierNodes, failureTimeout, memory, disk, keepPageCache, routerPrefetch, bytesScale, chunkTokens, requestTimeout, killAfter,
                launcher != null ? launcher : Launcher.discover(), out, io.kvtier.router.sim.LoadMode.of(loadMode));
    }

    @Override
    public Integer call() throws Exception {
        if (portRange != null) {
            io.kvtier.bench.compare.ServerProcess.usePortRange(portRange);
        }
        if (!chartsFrom.isEmpty()) {
            return replot();
        }
        FleetOptions o = options();
        Files.createDirectories(o.out());
        String started = Instant.now().toString();
        System.err.println("fleet: " + o.engines() + " x " + o.gpu() + " (tp " + o.engine().tp() + ") serving "
                + o.servedName() + ", " + o.engine().hbm().blocks() + " GPU blocks each; "
                + o.engine().roofline().describe());
        System.err.println("fleet: " + budgets(o));
        List<FleetPoint> points = new FleetRun(o, System.err).run();
        String command = "kvtier " + String.join(" ", spec.commandLine().getParseResult().originalArgs()); // the whole line: "bench fleet ..."
        String table = FleetReport.write(o.out(), new FleetReport.RunInfo(command.strip(), FleetReport.machine(),
                started, notes(o)), points);
        System.out.println(table);
        FleetCharts.write(o.out(), points);
        System.err.println("fleet: wrote " + o.out().toAbsolutePath());
        return points.stream().anyMatch(p -> p.latency().ok() == 0) ? 1 : 0;
    }

    /** Draws earlier runs' points together: their table, JSON, CSV and charts, in {@code --out}. */
    private int replot() throws java.io.IOException {
        List<FleetPoint> points = new java.util.ArrayList<>();
        for (Path f : chartsFrom) {
            points.addAll(io.kvtier.bench.fleet.FleetResults.read(f));
        }
        if (points.isEmpty()) {
            throw new IllegalArgumentException("--charts-from: no points in " + chartsFrom);
        }
        Files.createDirectories(out);
        String command = "kvtier " + String.join(" ", spec.commandLine().getParseResult().originalArgs()); // the whole line: "bench fleet ..."
        System.out.println(FleetReport.write(out, new FleetReport.RunInfo(command.strip(), FleetReport.machine(),
                Instant.now().toString(), "The points of " + chartsFrom + ", drawn together; each file's run says "
                + "how it was made."), points));
        FleetCharts.write(out, points);
        System.err.println("fleet: wrote " + out.toAbsolutePath());
        return 0;
    }

    /** What kvtier's budgets hold, as {@code kvtier size} counts it: tokens and LMCache chunks per node. */
    static String budgets(FleetOptions o) {
        long chunkBytes = o.engine().chunkBytes(o.chunkTokens()) * o.engine().tp(); // every worker's share
        java.util.function.LongFunction<String> held = bytes -> String.format(java.util.Locale.ROOT,
                "%s = %,d tokens (%,d chunks of %d)", io.kvtier.common.Units.bytes(bytes),
                bytes / chunkBytes * o.chunkTokens(), bytes / chunkBytes, o.chunkTokens());
        return (o.kvtierNodes() == 1 ? "one kvtier node:" : "a cluster of " + o.kvtierNodes()
                + " kvtier nodes with one backup per slot, each:") + " memory " + held.apply(o.memoryBytes())
                + ", disk (dram+ssd) " + held.apply(o.diskBytes()) + (o.bytesScale() < 1 ? "; " + o.bytesScale()
                + " of every byte moved and stored" : "");
    }

    private static String notes(FleetOptions o) {
        return "kvtier: " + budgets(o) + ". Modeled: the GPU's step times (" + o.engine().roofline().describe()
                + ") and its block count (" + o.engine().hbm().blocks() + " blocks of 16 tokens). Measured: everything else — HTTP, SSE, the "
                + "router, KV events, kvtier and every chunk transfer" + (o.bytesScale() < 1 ? " (" + o.bytesScale()
                + " of each chunk's bytes moved, its time divided by that)" : "") + ".";
    }
}
