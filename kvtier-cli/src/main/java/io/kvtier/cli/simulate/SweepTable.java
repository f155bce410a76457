package io.kvtier.cli.simulate;

import io.kvtier.common.Units;
import io.kvtier.kvcache.simulate.SimulationResult;
import java.util.List;
import java.util.Locale;

/**
 * The sweep as a table for people: one row per budget, hit rate split by the tier that served it, bytes read from
 * each tier, written and lost. A pure function of its arguments.
 */
final class SweepTable {
    private static final String ROW = "  %-9s %-9s %-9s %8s %8s %8s  %-10s %-10s %-10s %-10s %-10s%n";

    private SweepTable() {
    }

    static String format(List<SimulationResult> results) {
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, ROW, "MEMORY", "DISK", "TOTAL", "HIT", "MEM HIT", "DISK HIT",
                "READ MEM", "READ DISK", "WRITTEN", "TO DISK", "EVICTED"));
        for (SimulationResult r : results) {
            out.append(String.format(Locale.ROOT, ROW, Units.bytes(r.budget().memoryBytes()),
                    Units.bytes(r.budget().diskBytes()), Units.bytes(r.budget().totalBytes()), percent(r.hitRate()),
                    percent(r.memoryHitRate()), percent(r.diskHitRate()), Units.bytes(r.memoryReadBytes()),
                    Units.bytes(r.diskReadBytes()), Units.bytes(r.writtenBytes()), Units.bytes(r.diskWrittenBytes()),
                    Units.bytes(r.evictedBytes())));
        }
        return out.toString();
    }

    static String percent(double rate) {
        return String.format(Locale.ROOT, "%.1f%%", rate * 100);
    }
}
