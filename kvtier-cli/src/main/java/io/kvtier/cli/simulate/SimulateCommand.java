package io.kvtier.cli.simulate;

import io.kvtier.common.Durations;
import io.kvtier.common.Sizes;
import io.kvtier.common.Units;
import io.kvtier.kvcache.simulate.Budget;
import io.kvtier.kvcache.simulate.ChatTraceGenerator;
import io.kvtier.kvcache.simulate.ChatTraceOptions;
import io.kvtier.kvcache.simulate.ChunkOptions;
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
 * {@code kvtier simulate}: replays a chat trace (synthetic, or a JSONL file) through LMCache's chunking and the
 * store's tiering for every memory x disk budget given, and prints the hit rate and bytes per tier of each, as a
 * table or JSON, optionally with a chart. No server, no sockets, no real bytes: see docs/simulate.md.
 */
@Command(name = "simulate", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Hit-rate simulator: replays a multi-round chat trace through LMCache's chunking and kvtier's "
                + "tiering (the store's own S3-FIFO policy, a model of its disk log) for each memory x disk budget, "
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

    @Option(names = "--trace", paramLabel = "FILE",
            description = "JSONL trace, one request a line: {\"session\": \"u1\", \"turn\": 0, \"prompt_tokens\": "
                    + "1024, \"new_tokens\": 256} (+ optional time, prefix, prefix_tokens). Default: a synthetic "
                    + "chat service shaped by the flags below.")
    Path trace;

    @Option(names = "--chunk-tokens", paramLabel = "N", defaultValue = "256",
            description = "Tokens per chunk, LMCache's chunk_size (default: ${DEFAULT-VALUE}).")
    int chunkTokens;

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
            description = "Synthetic: mean tokens of a user message, +-50% (default: ${DEFAULT-VALUE}).")
    int userTokens;

    @Option(names = "--answer-tokens", paramLabel = "N", defaultValue = "400",
            description = "Synthetic: mean tokens of an answer, +-50% (default: ${DEFAULT-VALUE}).")
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
        ChunkOptions chunks = new ChunkOptions(chunkTokens, bytesPerToken(), saveDecode);
        List<Budget> budgets = budgets();
        String source = trace == null ? "synthetic chat (seed " + seed + ")" : trace.toString();
        Trace t = trace == null ? ChatTraceGenerator.generate(chatOptions()) : readTrace(trace);
        int n = threads == null ? Runtime.getRuntime().availableProcessors() : threads;
        if (n < 1) {
            throw new IllegalArgumentException("--threads " + n + " must be at least 1");
        }
        Sweep.Outcome outcome = Sweep.run(t, chunks, budgets, n);
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

    /** Every memory budget with every disk budget, memory-major, in the order given. */
    List<Budget> budgets() {
        List<Budget> budgets = new ArrayList<>();
        for (String m : memory) {
            long memoryBytes = size("--memory", m);
            for (String d : disk) {
                budgets.add(new Budget(memoryBytes, size("--disk", d)));
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

    private static Trace readTrace(Path file) throws IOException {
        try (var in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            return TraceFile.read(in, file.toString());
        }
    }

    static String report(String source, Trace t, ChunkOptions chunks, Sweep.Outcome outcome, Path chart) {
        StringBuilder s = new StringBuilder();
        s.append(String.format(Locale.ROOT, "trace:   %s: %d sessions, %d requests, %d prompt tokens%n", source,
                t.sessions(), t.size(), t.totalPromptTokens()));
        s.append(String.format(Locale.ROOT, "chunks:  %d tokens x %d bytes = %s; full chunks only; %s%n",
                chunks.chunkTokens(), chunks.bytesPerToken(), Units.bytes(chunks.chunkBytes()),
                chunks.saveDecode() ? "prompts and answers stored" : "prompts stored, answers not (LMCache "
                        + "save_decode_cache off)"));
        SimulationResult unlimited = outcome.unlimited();
        s.append(String.format(Locale.ROOT, "ceiling: %s hit rate with unlimited memory, which stores %s of chunks"
                + "%n%n", SweepTable.percent(unlimited.hitRate()), Units.bytes(unlimited.writtenBytes())));
        s.append(SweepTable.format(outcome.results()));
        s.append(String.format(Locale.ROOT, "%nsimulated %d requests x %d budgets in %.1f s%n", t.size(),
                outcome.results().size(), outcome.elapsed().toNanos() / 1e9));
        if (chart != null) {
            s.append("chart: ").append(chart).append('\n');
        }
        return s.toString();
    }

    private static String chartTitle(Trace t, ChunkOptions chunks) {
        return String.format(Locale.ROOT, "Hit rate by budget: %d requests, %s chunks", t.size(),
                Units.bytes(chunks.chunkBytes()));
    }

    /** One line per memory budget: total budget -> hit rate. */
    static Map<String, SortedMap<Long, Double>> seriesByMemory(List<SimulationResult> results) {
        Map<String, SortedMap<Long, Double>> series = new LinkedHashMap<>();
        for (SimulationResult r : results) {
            series.computeIfAbsent("memory " + Units.bytes(r.budget().memoryBytes()), k -> new TreeMap<>())
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
