package io.kvtier.bench.compare;

import io.kvtier.bench.limits.MachineLimitsResult;
import io.kvtier.common.Units;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Prints comparisons as a fixed-width table: per case, MB/s, p99 and hit rate of kvtier and Redis with the
 * kvtier/Redis ratio of each, and kvtier's MB/s as a percentage of the relevant machine limit. Stateless.
 */
public final class CompareTable {
    private static final String ROW =
            "%-9s %6s %-4s %5s %5s | %9s %9s %6s | %8s %8s %6s | %6s %6s %6s | %-22s%n";

    private CompareTable() {
    }

    public static void print(List<Comparison> comparisons, Optional<MachineLimitsResult> limits, PrintStream out) {
        out.printf(Locale.ROOT, ROW, "workload", "size", "op", "conns", "ws/m", "kv MB/s", "redis MB/s", "ratio",
                "kv p99", "redis p99", "ratio", "kv hit%", "rd hit%", "ratio", "kvtier % of limit");
        for (Comparison c : comparisons) {
            CaseKey k = c.key();
            out.printf(Locale.ROOT, ROW, k.workload(), Units.bytes(k.valueSize()).replace(" ", ""), k.op(),
                    k.connections(), k.isOverflow() ? fixed(k.factor(), 1) + "x" : "-",
                    fixed(c.kvtier().mbPerSec(), 1), fixed(c.redis().mbPerSec(), 1), fixed(c.throughputRatio(), 2),
                    fixed(c.kvtier().p99Ms(), 2), fixed(c.redis().p99Ms(), 2), fixed(c.p99Ratio(), 2),
                    percent(c.kvtier().hitRate()), percent(c.redis().hitRate()), fixed(c.hitRateRatio(), 2),
                    limitCell(c, limits));
        }
        out.println("ratio = kvtier / Redis (MB/s: above 1 is kvtier faster; p99: below 1 is kvtier faster);"
                + " ws/m = overflow working set / memory cap; p99 in ms");
        limits.ifPresent(l -> l.summaryLines().forEach(line -> out.println("limit: " + line)));
    }

    static String limitCell(Comparison c, Optional<MachineLimitsResult> limits) {
        if (limits.isEmpty()) {
            return "-";
        }
        return c.limit(limits.get()).map(l -> fixed(c.kvtierPercentOf(l), 0) + "% of " + l.name()).orElse("-");
    }

    static String fixed(double v, int decimals) {
        if (Double.isNaN(v)) {
            return "-";
        }
        if (Double.isInfinite(v)) {
            return "inf";
        }
        return String.format(Locale.ROOT, "%." + decimals + "f", v);
    }

    static String percent(double rate) {
        return Double.isNaN(rate) ? "-" : String.format(Locale.ROOT, "%.1f", rate * 100);
    }
}
