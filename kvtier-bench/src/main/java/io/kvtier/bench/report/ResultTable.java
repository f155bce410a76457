package io.kvtier.bench.report;

import io.kvtier.common.Units;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Prints a {@link BenchResult} as a fixed-width table for people, followed by per-workload totals (bytes moved,
 * hit rate, read GB/s), how latency was measured, and the first error of each failing operation. Stateless.
 */
public final class ResultTable {
    private static final String ROW = "%-9s %9s %-13s %9s %10s %9s %9s %9s %9s %9s %6s %7s %7s %7s%n";

    private ResultTable() {
    }

    public static void print(BenchResult result, PrintStream out) {
        out.printf(Locale.ROOT, ROW, "workload", "size", "op", "count", "ops/s", "MB/s", "p50 ms", "p99 ms",
                "p99.9 ms", "max ms", "hit%", "errors", "misses", "wrong");
        for (OpResult r : result.results()) {
            LatencySummary l = r.latencyMs();
            out.printf(Locale.ROOT, ROW, r.workload(), Units.bytes(r.valueSize()).replace(" ", ""), r.op(),
                    r.count(), fixed(r.opsPerSec(), 1), fixed(r.mbPerSec(), 1), fixed(l.p50(), 3),
                    fixed(l.p99(), 3), fixed(l.p999(), 3), fixed(l.max(), 3), percent(r.hitRate()), r.errors(),
                    r.misses(), r.wrongBytes());
        }
        for (Map.Entry<String, List<OpResult>> group : groups(result).entrySet()) {
            out.println(totals(group.getKey(), group.getValue()));
        }
        out.println("latency: " + result.run().latency());
        for (OpResult r : result.results()) {
            if (!r.firstError().isEmpty()) {
                out.printf("first error of %s %s: %s%n", r.workload(), r.op(), r.firstError());
            }
        }
    }

    private static Map<String, List<OpResult>> groups(BenchResult result) {
        Map<String, List<OpResult>> groups = new LinkedHashMap<>();
        for (OpResult r : result.results()) {
            groups.computeIfAbsent(r.workload() + " " + Units.bytes(r.valueSize()), k -> new ArrayList<>())
                    .add(r);
        }
        return groups;
    }

    /** One line per (workload, size): a request row carries the LMCache totals; otherwise GETs give hit rate. */
    static String totals(String group, List<OpResult> rows) {
        OpResult request = rows.stream().filter(r -> r.op().equals("request")).findFirst().orElse(null);
        if (request != null) {
            return String.format(Locale.ROOT, "%s: %s moved, chunk hit rate %s (chunks served / chunks needed)",
                    group, Units.gigabytes(request.bytes()), ratio(request.hitRate()));
        }
        long moved = rows.stream().mapToLong(OpResult::bytes).sum();
        StringBuilder line = new StringBuilder(group + ": " + Units.gigabytes(moved) + " moved");
        rows.stream().filter(r -> r.op().startsWith("GET")).forEach(r -> line.append(String.format(Locale.ROOT,
                ", %s hit rate %s, read %.2f GB/s", r.op(), ratio(r.hitRate()), r.mbPerSec() / 1000)));
        return line.toString();
    }

    private static String fixed(double value, int decimals) {
        return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%." + decimals + "f", value);
    }

    private static String ratio(double rate) {
        return Double.isNaN(rate) ? "n/a" : percent(rate) + "%";
    }

    private static String percent(double rate) {
        return Double.isNaN(rate) ? "-" : String.format(Locale.ROOT, "%.1f", rate * 100);
    }
}
