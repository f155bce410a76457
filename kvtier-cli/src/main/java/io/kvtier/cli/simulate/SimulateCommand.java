package io.kvtier.cli.simulate;

import io.kvtier.common.Durations;
import io.kvtier.common.Sizes;
import io.kvtier.common.Units;
import io.kvtier.kvcache.simulate.BlockTrace;
import io.kvtier.kvcache.simulate.Budget;
import io.kvtier.kvcache.simulate.ChatTraceGenerator;
import io.kvtier.kvcache.simulate.ChatTraceOptions;
import io.kvtier.kvcache.simulate.ChunkOptions;
import io.kvtier.kvcache.simulate.ChunkedTrace;
import io.kvtier.kvcache.simulate.SimulationResult;
import io.kvtier.kvcache.simulate.Sweep;
import io.kvtier.kvcache.simulate.Trace;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;

/**
 * {@code kvtier simulate}: replays a chat trace (synthetic, or a JSONL file in kvtier's chat format or in Mooncake's,
 * told apart by {@link TraceFormat}) through LMCache's chunking and the store's tiering for every memory x disk budget
 * given, and prints the hit rate and bytes per tier of each, as a table or JSON, optionally with a chart. No server,
 * no sockets, no real bytes: see docs/simulate.md.
 */
@Command(name = "simulate", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Hit-rate simulator: replays a multi-round chat trace through LMCache's chunking and kvtier's "
                + "tiering (the store's own eviction policy, a model of its disk log) for each memory x disk budget, "
                + "and prints hit rate and bytes per tier. See docs/simulate.md.",
            "Example: kvtier simulate --memory 16g,64g --disk 0,256g,1t --chart sweep.png"})
public final class SimulateCommand implements Callable<Integer> {
    @Option(names = "--memory", paramLabel = "SIZES", split = ",", defaultValue = "16g,64g,256g",
            description = "Memory budgets to try, comma-separated (default: ${DEFAULT-VALUE}).")
    List<String> memory;

    @Option(names = "--disk", paramLabel = "SIZES", split = ",", defaultValue = "0,256g,1t,4t",
            description = "Disk budgets to try with each memory budget; 0 = no disk tier, a memory-only baseline "
                    + "(default: ${DEFAULT-VALUE}).")
    List<String> disk;

    @Option(names = "--disk-write-limit", paramLabel = "RATES", split = ",", defaultValue = "0",
            description = "The store's --disk-write-limit to try with each budget, bytes per second, "
                    + "comma-separated; 0 = none (default: ${DEFAULT-VALUE}). Needs a trace with times.")
    List<String> diskWriteLimits;

    @Option(names = "--trace", paramLabel = "FILE",
            description = "JSONL trace, one request a line: {\"session\": \"u1\", \"turn\": 0, \"prompt_tokens\": "
                    + "1024, \"new_tokens\": 256} (+ optional time, prefix, prefix_tokens), or Mooncake's format, "
                    + "detected by its hash_ids: {\"timestamp\": 0, \"input_length\": 1200, \"output_length\": 50, "
                    + "\"hash_ids\": [0, 1, 2]}. Default: a synthetic chat service shaped by the flags below.")
    Path trace;

    @Option(names = "--chunk-tokens", paramLabel = "N",
            description = "Tokens per chunk, LMCache's chunk_size (default: 256); with a Mooncake trace, the tokens "
                    + "of one hash_ids block (default: 512, as in Mooncake's traces).")
    Integer chunkTokens;

    @Option(names = "--bytes-per-token", paramLabel = "N",
            description = "KV-cache bytes per token; 131072 = Llama-3.1-8B in bf16 (the default).")
    Long bytesPerToken;

    @Option(names = "--model", paramLabel = "NAME", description = "Take the bytes per token of a model of "
            + "./kvtier size's table (bf16 KV cache, one GPU), e.g. qwen3-32b; instead of --bytes-per-token.")
    String model;

    @Option(names = "--save-decode", description = "Also store the answers' chunks, as LMCache's "
            + "save_decode_cache: true does (default: off, LMCache's default: prompts only).")
    boolean saveDecode;

    @Option(names = "--sessions", paramLabel = "N", defaultValue = "4000",
            description = "Synthetic: users, each one conversation (default: ${DEFAULT-VALUE}).")
    int sessions;

    @Option(names = "--turns", paramLabel = "N", defaultValue = "8",
            description = "Synthetic: mean turns per conversation, 1 to 2N-1 (default: ${DEFAULT-VALUE}).")
    int turns;

    @Option(names = "--system-prompts", paramLabel = "N", defaultValue = "16",
            description = "Synthetic: distinct shared system prompts (default: ${DEFAULT-VALUE}).")
    int systemPrompts;

    @Option(names = "--system-tokens", paramLabel = "N", defaultValue = "2048",
            description = "Synthetic: tokens of each system prompt; 0 = none (default: ${DEFAULT-VALUE}).")
    int systemTokens;

    @Option(names = "--zipf", paramLabel = "S", defaultValue = "1.0",
            description = "Synthetic: popularity of system prompts, P(k-th) ~ 1/k^S; 0 = uniform "
                    + "(default: ${DEFAULT-VALUE}).")
    double zipf;

    @Option(names = "--user-tokens", paramLabel = "N", defaultValue = "200",
            description = "Synthetic: mean tokens of a user message, +-50%% (default: ${DEFAULT-VALUE}).")
    int userTokens;

    @Option(names = "--answer-tokens", paramLabel = "N", defaultValue = "400",
            description = "Synthetic: mean tokens of an answer, +-50%% (default: ${DEFAULT-VALUE}).")
    int answerTokens;

    @Option(names = "--think-time", paramLabel = "DURATION", defaultValue = "60s", converter = DurationConverter.class,
            description = "Synthetic: mean pause between a user's turns, exponential (default: ${DEFAULT-VALUE}).")
    Duration thinkTime;

    @Option(names = "--arrival-window", paramLabel = "DURATION", defaultValue = "1h",
            converter = DurationConverter.class,
            description = "Synthetic: users start uniformly within this time (default: ${DEFAULT-VALUE}).")
    Duration arrivalWindow;

    @Option(names = "--max-context", paramLabel = "N", defaultValue = "32768",
            description = "Synthetic: a conversation ends before its context passes this (default: ${DEFAULT-VALUE}).")
    int maxContext;

    @Option(names = "--seed", paramLabel = "N", defaultValue = "1",
            description = "Synthetic: random seed; the same seed gives the same trace (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--chart", paramLabel = "FILE",
            description = "Also draw hit rate vs memory + disk budget, one line per memory budget, to FILE "
                    + "(.png or .svg).")
    Path chart;

    @Option(names = "--json", description = "Print one JSON object instead of the table.")
    boolean json;

    @Option(names = "--policy", paramLabel = "NAMES", split = ",", defaultValue = "kvtier",
            description = "Memory eviction orders to compare, comma-separated: kvtier (the store's: S3-FIFO for small "
                    + "values, LRU for chunks), lru, s3fifo, chain (an earlier candidate: docs/simulate.md); each "
                    + "budget runs with each (default: ${DEFAULT-VALUE}).")
    List<String> policies;

    @Option(names = "--threads", paramLabel = "N",
            description = "Budgets simulated at once (default: the number of CPUs).")
    Integer threads;

    PrintStream out = System.out;

    private long bytesPerToken() {
        if (model != null && bytesPerToken != null) {
            throw new IllegalArgumentException("give --model or --bytes-per-token, not both");
        }
        if (model != null) {
            return io.kvtier.kvcache.sizing.KvFootprint.of(io.kvtier.kvcache.sizing.ModelTable.find(model),
                    io.kvtier.kvcache.sizing.Precision.BF16, 1).workerBytesPerToken();
        }
        return bytesPerToken == null ? 131_072 : bytesPerToken;
    }

    @Override
    public Integer call() throws IOException {
        TraceFormat format = trace == null ? TraceFormat.CHAT : TraceFormat.of(trace);
        ChunkOptions chunks = new ChunkOptions(chunkTokens == null ? format.defaultChunkTokens : chunkTokens,
                bytesPerToken(), saveDecode);
        List<Budget> budgets = budgets();
        String source = trace == null ? "synthetic chat (seed " + seed + ")" : trace.toString();
        ChunkedTrace t = trace == null ? ChatTraceGenerator.generate(chatOptions())
                : readTrace(trace, format, chunks.chunkTokens());
        int n = threads == null ? Runtime.getRuntime().availableProcessors() : threads;
        if (n < 1) {
            throw new IllegalArgumentException("--threads " + n + " must be at least 1");
        }
        List<io.kvtier.kvcache.simulate.Policy> kinds = policies.stream().map(io.kvtier.kvcache.simulate.Policy::of)
                .distinct().toList();
        Sweep.Outcome outcome = Sweep.run(t, chunks, budgets, kinds, n);
        Path drawn = chart == null ? null : HitRateChart.write(chart, chartTitle(t, chunks),
                seriesByMemory(outcome.results()));
        if (json) {
            out.print(SweepJson.format(source, t, chunks, outcome, drawn == null ? null : drawn.toString()));
        } else {
            out.print(report(source, t, chunks, outcome, drawn));
        }
        out.flush();
        return 0;
    }

    ChatTraceOptions chatOptions() {
        return new ChatTraceOptions(sessions, turns, systemPrompts, systemTokens, zipf, userTokens, answerTokens,
                thinkTime, arrivalWindow, maxContext, seed);
    }

    /**
     * Every memory budget with every disk budget and every disk write limit, memory-major, in the order given (disk 0,
     * no disk tier, once, without a limit).
     */
    List<Budget> budgets() {
        List<Budget> budgets = new ArrayList<>();
        for (String m : memory) {
            long memoryBytes = size("--memory", m);
            for (String d : disk) {
                long diskBytes = size("--disk", d);
                if (diskBytes == 0) { // no disk tier: nothing to limit
                    budgets.add(new Budget(memoryBytes, 0));
                    continue;
                }
                for (String w : diskWriteLimits) {
                    budgets.add(new Budget(memoryBytes, diskBytes, size("--disk-write-limit", w)));
                }
            }
        }
        return budgets;
    }

    private static long size(String flag, String text) {
        try {
            return Sizes.parse(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(flag + ": " + e.getMessage());
        }
    }

    private static ChunkedTrace readTrace(Path file, TraceFormat format, int chunkTokens) throws IOException {
        try (var in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            return format.read(in, file.toString(), chunkTokens);
        }
    }

    static String report(String source, ChunkedTrace t, ChunkOptions chunks, Sweep.Outcome outcome, Path chart) {
        StringBuilder s = new StringBuilder();
        boolean blocks = t instanceof BlockTrace;
        s.append(traceLine(source, t));
        s.append(chunksLine(chunks, blocks));
        SimulationResult unlimited = outcome.unlimited();
        String ofBlocks = blocks ? " (" + SweepTable.percent(unlimited.chunkHitRate()) + " of looked-up blocks, "
                + SweepTable.percent(unlimited.allChunkHitRate()) + " of all blocks)" : "";
        s.append(String.format(Locale.ROOT, "ceiling: %s hit rate%s with unlimited memory, which stores %s of chunks"
                + "%n%n", SweepTable.percent(unlimited.hitRate()), ofBlocks, Units.bytes(unlimited.writtenBytes())));
        s.append(SweepTable.format(outcome.results(), blocks,
                outcome.results().stream().map(SimulationResult::policy).distinct().count() > 1));
        s.append(String.format(Locale.ROOT, "%nsimulated %d requests x %d budgets and policies in %.1f s%n",
                t.size(), outcome.results().size(), outcome.elapsed().toNanos() / 1e9));
        if (chart != null) {
            s.append("chart: ").append(chart).append('\n');
        }
        return s.toString();
    }

    /** The report's first line: what the trace holds. */
    private static String traceLine(String source, ChunkedTrace t) {
        return switch (t) {
            case Trace c -> String.format(Locale.ROOT, "trace:   %s: %d sessions, %d requests, %d prompt tokens%n",
                    source, c.sessions(), c.size(), c.totalPromptTokens());
            case BlockTrace b -> String.format(Locale.ROOT, "trace:   %s: Mooncake format, %d requests, %d prompt "
                    + "tokens, %d blocks (%d full: BLK HIT = hit / full blocks)%n", source, b.size(),
                    b.totalPromptTokens(), b.totalBlocks(), b.fullBlocks());
        };
    }

    /** The report's second line: what a chunk is, and which are stored. */
    private static String chunksLine(ChunkOptions chunks, boolean blocks) {
        String size = String.format(Locale.ROOT, "%d tokens x %d bytes = %s", chunks.chunkTokens(),
                chunks.bytesPerToken(), Units.bytes(chunks.chunkBytes()));
        if (blocks) {
            return String.format(Locale.ROOT, "chunks:  one per block, %s; full blocks only (a partial last one is "
                    + "neither looked up nor stored); answers not stored%n", size);
        }
        return String.format(Locale.ROOT, "chunks:  %s; full chunks only; %s%n", size, chunks.saveDecode()
                ? "prompts and answers stored" : "prompts stored, answers not (LMCache save_decode_cache off)");
    }

    private static String chartTitle(ChunkedTrace t, ChunkOptions chunks) {
        return String.format(Locale.ROOT, "Hit rate by budget: %d requests, %s chunks", t.size(),
                Units.bytes(chunks.chunkBytes()));
    }

    /** One line per memory budget: total budget -> hit rate. */
    static Map<String, SortedMap<Long, Double>> seriesByMemory(List<SimulationResult> results) {
        Map<String, SortedMap<Long, Double>> series = new LinkedHashMap<>();
        for (SimulationResult r : results) {
            boolean several = results.stream().map(SimulationResult::policy).distinct().count() > 1;
            series.computeIfAbsent("memory " + Units.bytes(r.budget().memoryBytes())
                            + (several ? ", " + r.policy().label() : ""), k -> new TreeMap<>())
                    .put(r.budget().totalBytes(), r.hitRate());
        }
        return series;
    }

    /** A duration in {@link Durations}' grammar ("500ms", "60s", "5m", "1h"; a bare number is seconds). */
    static final class DurationConverter implements ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            return Durations.parse(value);
        }
    }
}
