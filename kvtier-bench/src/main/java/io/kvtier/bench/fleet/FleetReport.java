package io.kvtier.bench.fleet;

import io.kvtier.common.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Writes the fleet benchmark's points as {@value #JSON_FILE} (everything), {@value #CSV_FILE} (one row per point,
 * the JSON's members flattened) and a fixed-width table for people ({@value #TABLE_FILE}, and returned for stdout).
 * Stateless and thread-safe. The JSON ({@value #SCHEMA}), NaN written as null:
 *
 * <pre>{@code
 * {
 *   "schema": "kvtier-bench-fleet/1",
 *   "run": {"commandLine": "kvtier bench fleet ...", "machine": "Linux amd64, 16 CPUs (...), 125.7 GiB, JDK 25",
 *           "startedAt": "2026-12-01T10:15:30Z", "notes": "Modeled: the GPU's step times ... Measured: ..."},
 *   "points": [
 *     {"config": "kvtier dram / prefix", "offload": "dram", "routing": "prefix", "rateLabel": "4 req/s",
 *      "offeredRps": 4.0, "gpus": 8, "rpsPerGpu": 0.49,
 *      "latency": {"ok": 1180, "errors": 2, "errorRate": 0.0017, "requestsPerSecond": 3.93, "ttftP50": 0.21, ...,
 *                  "firstErrors": ["HTTP 503: ..."]},          // every LatencyStats member, seconds
 *      "counters": {"promptTokens": 9100000, "gpuHitTokens": ..., ..., "gpuHitRate": 0.41, "memoryHitRate": 0.33,
 *                   "diskHitRate": 0.08},                      // every EngineCounters member and the hit rates
 *      "ceiling": {"promptTokens": 9000000, "reusableTokens": 8100000, "share": 0.9, "reached": 0.8},
 *                                        // ReuseCeiling: the measured requests' tokens an unlimited shared cache held,
 *                                        // and the share of those the engines reported cached
 *      "timeline": {"bucketSeconds": 2.0, "killed": "n3", "killedAtSeconds": 30.0,    // null, null without a kill
 *                   "buckets": [{"startSeconds": 0.0, "ok": 9, "errors": 0, "ttftP50": 0.12, "ttftP90": 0.3,
 *                                "ttftMax": 0.4, "cachedShare": 0.71}, ...]}}       // by send time, warm-up included
 *   ]
 * }
 * }</pre>
 * CSV columns are the point's members, then {@code latency.<member>}, {@code counters.<member>} and
 * {@code ceiling.<member>} (the timeline is in the JSON only).
 */
public final class FleetReport {
    public static final String SCHEMA = "kvtier-bench-fleet/1";
    public static final String JSON_FILE = "fleet.json";
    public static final String CSV_FILE = "fleet.csv";
    public static final String TABLE_FILE = "fleet.txt";

    /**
     * What ran, for the reader of the results.
     *
     * @param commandLine the command as typed
     * @param machine     what it ran on ({@link #machine()}) and the GPU the engines emulate (or run on)
     * @param startedAt   when the sweep began, ISO-8601 ({@code Instant.toString()})
     * @param notes       what is modeled and what is measured
     */
    public record RunInfo(String commandLine, String machine, String startedAt, String notes) {
        public RunInfo {
            Objects.requireNonNull(commandLine, "commandLine");
            Objects.requireNonNull(machine, "machine");
            Objects.requireNonNull(startedAt, "startedAt");
            Objects.requireNonNull(notes, "notes");
        }
    }

    private FleetReport() {
    }

    /**
     * This machine, for {@link RunInfo#machine()}: OS and architecture, CPUs (and their model where /proc/cpuinfo
     * names it), memory, JDK: e.g. {@code Linux amd64, 16 CPUs (AMD EPYC 9454), 125.7 GiB, JDK 25.0.1}.
     */
    public static String machine() {
        StringBuilder s = new StringBuilder(System.getProperty("os.name") + " " + System.getProperty("os.arch") + ", "
                + Runtime.getRuntime().availableProcessors() + " CPUs");
        cpuModel().ifPresent(model -> s.append(" (").append(model).append(')'));
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            s.append(String.format(Locale.ROOT, ", %.1f GiB", os.getTotalMemorySize() / (double) (1L << 30)));
        }
        return s.append(", JDK ").append(Runtime.version()).toString();
    }

    private static Optional<String> cpuModel() {
        try (Stream<String> lines = Files.lines(Path.of("/proc/cpuinfo"))) {
            return lines.filter(l -> l.startsWith("model name")).map(l -> l.substring(l.indexOf(':') + 1).strip())
                    .findFirst();
        } catch (IOException | UncheckedIOException e) {
            return Optional.empty(); // not Linux: the CPU count says enough
        }
    }

    /** Writes the three files into {@code dir} (made if missing) and returns the table. */
    public static String write(Path dir, RunInfo run, List<FleetPoint> points) throws IOException {
        Files.createDirectories(dir);
        String table = table(points);
        Files.writeString(dir.resolve(JSON_FILE), toJson(run, points), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve(CSV_FILE), toCsv(points), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve(TABLE_FILE), table, StandardCharsets.UTF_8);
        return table;
    }

    public static String toJson(RunInfo run, List<FleetPoint> points) {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("schema", SCHEMA);
        root.put("run", Json.object("commandLine", run.commandLine(), "machine", run.machine(),
                "startedAt", run.startedAt(), "notes", run.notes()));
        root.put("points", points.stream().map(p -> {
            Map<String, Object> m = point(p);
            m.put("timeline", timeline(p.timeline()));
            return m;
        }).toList());
        return Json.write(root);
    }

    private static Map<String, Object> point(FleetPoint p) {
        Map<String, Object> m = Json.object("config", p.config(), "offload", p.offload(), "routing", p.routing(),
                "rateLabel", p.rateLabel(), "offeredRps", p.offeredRps(), "gpus", p.gpus(), "rpsPerGpu",
                p.rpsPerGpu());
        m.put("latency", latency(p.latency()));
        m.put("counters", counters(p.counters()));
        m.put("ceiling", Json.object("promptTokens", p.ceiling().promptTokens(), "reusableTokens",
                p.ceiling().reusableTokens(), "share", p.ceiling().share(), "reached", p.ofCeiling()));
        return m;
    }

    private static Map<String, Object> timeline(FleetTimeline t) {
        return Json.object("bucketSeconds", t.bucketSeconds(), "killed", t.killed(), "killedAtSeconds",
                t.killedAtSeconds(), "buckets", t.buckets().stream().map(b -> Json.object("startSeconds",
                        b.startSeconds(), "ok", b.ok(), "errors", b.errors(), "ttftP50", b.ttftP50(), "ttftP90",
                        b.ttftP90(), "ttftMax", b.ttftMax(), "cachedShare", b.cachedShare())).toList());
    }

    private static Map<String, Object> latency(LatencyStats l) {
        return Json.object("ok", l.ok(), "errors", l.errors(), "errorRate", l.errorRate(),
                "requestsPerSecond", l.requestsPerSecond(), "outputTokensPerSecond", l.outputTokensPerSecond(),
                "ttftP50", l.ttftP50(), "ttftP90", l.ttftP90(), "ttftP99", l.ttftP99(), "ttftMean", l.ttftMean(),
                "tpotP50", l.tpotP50(), "tpotP90", l.tpotP90(), "tpotMean", l.tpotMean(),
                "tokensPerSecondPerUser", l.tokensPerSecondPerUser(),
                "tokensPerSecondPerUserMedian", l.tokensPerSecondPerUserMedian(),
                "e2eP50", l.e2eP50(), "e2eP90", l.e2eP90(), "promptTokens", l.promptTokens(),
                "cachedTokens", l.cachedTokens(), "outputTokens", l.outputTokens(),
                "measuredSeconds", l.measuredSeconds(), "firstErrors", l.firstErrors());
    }

    private static Map<String, Object> counters(EngineCounters c) {
        return Json.object("promptTokens", c.promptTokens(), "gpuHitTokens", c.gpuHitTokens(),
                "memoryHitTokens", c.memoryHitTokens(), "diskHitTokens", c.diskHitTokens(),
                "recomputedTokens", c.recomputedTokens(), "bytesRead", c.bytesRead(), "bytesWritten", c.bytesWritten(),
                "storesDropped", c.storesDropped(), "loadFailures", c.loadFailures(), "preemptions", c.preemptions(),
                "gpuBusySeconds", c.gpuBusySeconds(), "loadSeconds", c.loadSeconds(), "fetchBytesPerSecond",
                c.fetchBytesPerSecond(), "stepLagSeconds", c.stepLagSeconds(),
                "gpuHitRate", c.gpuHitRate(), "memoryHitRate", c.memoryHitRate(), "diskHitRate", c.diskHitRate());
    }

    /** A header row, then one row per point; empty cells for NaN; errors joined with {@code " | "}. */
    public static String toCsv(List<FleetPoint> points) {
        List<String> header = new ArrayList<>();
        flatten("", point(sample()), header, null);
        StringBuilder out = new StringBuilder(String.join(",", header)).append('\n');
        for (FleetPoint p : points) {
            List<String> row = new ArrayList<>();
            flatten("", point(p), null, row);
            out.append(String.join(",", row)).append('\n');
        }
        return out.toString();
    }

    private static void flatten(String prefix, Map<String, Object> m, List<String> names, List<String> cells) {
        for (Map.Entry<String, Object> e : m.entrySet()) {
            if (e.getValue() instanceof Map<?, ?> inner) {
                @SuppressWarnings("unchecked")
                Map<String, Object> members = (Map<String, Object>) inner;
                flatten(prefix + e.getKey() + ".", members, names, cells);
            } else if (names != null) {
                names.add(prefix + e.getKey());
            } else {
                cells.add(cell(e.getValue()));
            }
        }
    }

    /** A point with every member, for the header (which must not depend on there being points). */
    private static FleetPoint sample() {
        return new FleetPoint("none", "direct", "", 0, 1, LatencyStats.of(List.of(), 0),
                new EngineCounters(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, Double.NaN, 0), FleetTimeline.EMPTY);
    }

    private static String cell(Object value) {
        return switch (value) {
            case null -> "";
            case Double d -> number(d);
            case List<?> list -> io.kvtier.bench.report.CsvReport.cell(String.join(" | ", list.stream().map(String::valueOf).toList()));
            default -> io.kvtier.bench.report.CsvReport.cell(value.toString());
        };
    }

    private static String number(double d) {
        if (Double.isNaN(d) || Double.isInfinite(d)) {
            return "";
        }
        return new BigDecimal(d).round(new MathContext(6)).stripTrailingZeros().toPlainString();
    }

    /**
     * The table for people: one row per point, then the kills, then the first error of each point that had errors.
     * TTFT in seconds, TPOT in milliseconds, hit rates as percent of prompt tokens, the ceiling ({@link ReuseCeiling})
     * as the percent of the measured prompt tokens an unlimited shared cache would have held and the percent of that
     * the engines reported cached ("reach"), bytes moved in MB (10^6), the engines' fetch rate in GB/s of real KV
     * bytes.
     */
    public static String table(List<FleetPoint> points) {
        int configWidth = Math.max(6, points.stream().mapToInt(p -> p.config().length()).max().orElse(0));
        int rateWidth = Math.max(4, points.stream().mapToInt(p -> p.rateLabel().length()).max().orElse(0));
        String row = "%-" + configWidth + "s  %-" + rateWidth + "s %9s %8s %8s %8s %8s %8s %6s %6s %6s %6s %6s %12s"
                + " %10s %10s %6s %7s%n";
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, row, "config", "rate", "req/s/GPU", "TPS/user", "TTFT p50", "TTFT p90",
                "TTFT p99", "TPOT p50", "GPU%", "mem%", "disk%", "ceil%", "reach%", "recomputed", "MB read",
                "MB written", "fetch", "errors"));
        out.append(String.format(Locale.ROOT, row, "", "", "", "tok/s", "s", "s", "s", "ms", "", "", "", "", "",
                "tokens", "", "", "GB/s", ""));
        for (FleetPoint p : points) {
            LatencyStats l = p.latency();
            EngineCounters c = p.counters();
            out.append(String.format(Locale.ROOT, row, p.config(), p.rateLabel(), fixed(p.rpsPerGpu(), 3),
                    fixed(l.tokensPerSecondPerUser(), 1), fixed(l.ttftP50(), 3), fixed(l.ttftP90(), 3),
                    fixed(l.ttftP99(), 3), fixed(l.tpotP50() * 1000, 1), fixed(c.gpuHitRate() * 100, 1),
                    fixed(c.memoryHitRate() * 100, 1), fixed(c.diskHitRate() * 100, 1),
                    fixed(p.ceiling().share() * 100, 1), fixed(p.ofCeiling() * 100, 1), c.recomputedTokens(),
                    fixed(c.bytesRead() / 1e6, 0), fixed(c.bytesWritten() / 1e6, 0),
                    fixed(c.fetchBytesPerSecond() / 1e9, 2), l.errors()));
        }
        for (FleetPoint p : points) {
            FleetTimeline t = p.timeline();
            if (t.hasKill()) {
                double at = t.killedAtSeconds();
                out.append(String.format(Locale.ROOT, "%s killed (SIGKILL) %.1f s into %s at %s: worst TTFT p90 of a"
                        + " %.0f s bucket %s s before, %s s after; %d errors in the point%n", t.killed(), at,
                        p.config(), p.rateLabel(), t.bucketSeconds(), fixed(t.worstP90Before(at), 3),
                        fixed(t.worstP90After(at), 3), p.latency().errors()));
            }
        }
        for (FleetPoint p : points) {
            if (!p.latency().firstErrors().isEmpty()) {
                out.append(String.format(Locale.ROOT, "first error of %s at %s: %s%n", p.config(), p.rateLabel(),
                        p.latency().firstErrors().getFirst()));
            }
        }
        return out.toString().lines().map(String::stripTrailing).collect(Collectors.joining("\n", "", "\n"));
    }

    private static String fixed(double value, int decimals) {
        return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%." + decimals + "f", value);
    }
}
