package io.kvtier.bench.cluster;

import io.kvtier.bench.report.BenchResultJson;
import io.kvtier.bench.report.OpResult;
import io.kvtier.common.Json;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The scaling comparison's result: a row per (operation, cluster size) and the many-nodes/1-node ratio of each
 * operation; printed as a table and written as {@code scaling.csv} and {@code scaling.json} (with every pass).
 * Immutable.
 */
public record ScalingTable(List<ScalingRow> rows) {
    static final String SCHEMA = "kvtier-bench-cluster-scaling/1";
    static final String CSV_HEADER = "op,nodes,rounds,opsPerSec,mbPerSec,p50Ms,p99Ms,errors,wrongBytes,ratioToOneNode";
    private static final String ROW = "%-4s %5s %6s | %10s %9s %8s %8s | %6s %6s | %s%n";

    public ScalingTable {
        rows = List.copyOf(rows);
    }

    /** Averages the passes per (operation, size), operations in the order they ran, sizes ascending. */
    static ScalingTable of(List<ScalingPass> passes) {
        Set<String> ops = new LinkedHashSet<>();
        passes.forEach(p -> p.result().results().forEach(r -> ops.add(r.op())));
        List<Integer> sizes = passes.stream().map(ScalingPass::nodes).distinct().sorted().toList();
        List<ScalingRow> rows = new ArrayList<>();
        for (String op : ops) {
            for (int nodes : sizes) {
                List<OpResult> perRound = passes.stream().filter(p -> p.nodes() == nodes)
                        .flatMap(p -> p.result().results().stream()).filter(r -> r.op().equals(op)).toList();
                if (!perRound.isEmpty()) {
                    rows.add(ScalingRow.of(op, nodes, perRound));
                }
            }
        }
        return new ScalingTable(rows);
    }

    /** MB/s of {@code row} over MB/s of the same operation on 1 node; NaN without a 1-node row. */
    public double ratioToOneNode(ScalingRow row) {
        return rows.stream().filter(r -> r.op().equals(row.op()) && r.nodes() == 1).findFirst()
                .map(one -> row.mbPerSec() / one.mbPerSec()).orElse(Double.NaN);
    }

    void print(PrintStream out) {
        out.printf(Locale.ROOT, ROW, "op", "nodes", "rounds", "ops/s", "MB/s", "p50 ms", "p99 ms", "errors",
                "wrong", "vs 1 node");
        for (ScalingRow r : rows) {
            out.printf(Locale.ROOT, ROW, r.op(), r.nodes(), r.rounds(), fixed(r.opsPerSec(), 1),
                    fixed(r.mbPerSec(), 1), fixed(r.p50Ms(), 2), fixed(r.p99Ms(), 2), r.errors(), r.wrongBytes(),
                    r.nodes() == 1 ? "-" : fixed(ratioToOneNode(r), 2) + "x");
        }
        out.println("ops/s and MB/s: mean of the rounds; p50/p99: all rounds' latencies merged; vs 1 node: MB/s"
                + " ratio (same value size, so also the ops/s ratio)");
    }

    String toCsv() {
        StringBuilder out = new StringBuilder(CSV_HEADER).append('\n');
        for (ScalingRow r : rows) {
            out.append(String.format(Locale.ROOT, "%s,%d,%d,%s,%s,%s,%s,%d,%d,%s%n", r.op(), r.nodes(), r.rounds(),
                    num(r.opsPerSec()), num(r.mbPerSec()), num(r.p50Ms()), num(r.p99Ms()), r.errors(),
                    r.wrongBytes(), r.nodes() == 1 ? "" : num(ratioToOneNode(r))));
        }
        return out.toString();
    }

    String toJson(Map<String, String> options, List<ScalingPass> passes) {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("schema", SCHEMA);
        root.put("options", options);
        root.put("rows", rows.stream().map(r -> {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("op", r.op());
            m.put("nodes", r.nodes());
            m.put("rounds", r.rounds());
            m.put("opsPerSec", r.opsPerSec());
            m.put("mbPerSec", r.mbPerSec());
            m.put("p50Ms", r.p50Ms());
            m.put("p99Ms", r.p99Ms());
            m.put("errors", r.errors());
            m.put("wrongBytes", r.wrongBytes());
            m.put("ratioToOneNode", r.nodes() == 1 ? null : ratioToOneNode(r));
            return m;
        }).toList());
        root.put("passes", passes.stream().map(p -> {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("nodes", p.nodes());
            m.put("round", p.round());
            m.put("result", Json.parse(BenchResultJson.toJson(p.result())));
            return m;
        }).toList());
        return Json.write(root);
    }

    void write(Path dir, Map<String, String> options, List<ScalingPass> passes) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("scaling.csv"), toCsv(), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("scaling.json"), toJson(options, passes), StandardCharsets.UTF_8);
    }

    private static String fixed(double v, int decimals) {
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%." + decimals + "f", v);
    }

    private static String num(double v) {
        return Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%.4f", v);
    }
}
