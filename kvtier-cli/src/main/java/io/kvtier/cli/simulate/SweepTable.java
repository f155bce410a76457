package io.kvtier.cli.simulate;

import io.kvtier.common.Units;
import io.kvtier.kvcache.simulate.SimulationResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The sweep as a table for people: one row per budget, hit rate split by the tier that served it (and, for a trace
 * of blocks, hit blocks / looked-up blocks), bytes read from each tier, written and lost. A pure function of its
 * arguments.
 */
final class SweepTable {
    private static final String ROW = "  %-9s %-9s %-9s %8s %8s %8s  %-10s %-10s %-10s %-10s %-10s%n";
    private static final String BLOCK_ROW = "  %-9s %-9s %-9s %8s %8s %8s %8s  %-10s %-10s %-10s %-10s %-10s%n";

    private SweepTable() {
    }

    /** @param blocks whether to add the {@code BLK HIT} column (a trace whose requests name their blocks) */
    static String format(List<SimulationResult> results, boolean blocks) {
        StringBuilder out = new StringBuilder();
        out.append(row(blocks, "MEMORY", "DISK", "TOTAL", "HIT", "BLK HIT", "MEM HIT", "DISK HIT", "READ MEM",
                "READ DISK", "WRITTEN", "TO DISK", "EVICTED"));
        for (SimulationResult r : results) {
            out.append(row(blocks, Units.bytes(r.budget().memoryBytes()), Units.bytes(r.budget().diskBytes()),
                    Units.bytes(r.budget().totalBytes()), percent(r.hitRate()), percent(r.chunkHitRate()),
                    percent(r.memoryHitRate()), percent(r.diskHitRate()), Units.bytes(r.memoryReadBytes()),
                    Units.bytes(r.diskReadBytes()), Units.bytes(r.writtenBytes()), Units.bytes(r.diskWrittenBytes()),
                    Units.bytes(r.evictedBytes())));
        }
        return out.toString();
    }

    /** One line; the fifth cell (the block hit rate) only with {@code blocks}. */
    private static String row(boolean blocks, String... cells) {
        List<String> shown = new ArrayList<>(List.of(cells));
        if (!blocks) {
            shown.remove(4);
        }
        return String.format(Locale.ROOT, blocks ? BLOCK_ROW : ROW, shown.toArray());
    }

    static String percent(double rate) {
        return String.format(Locale.ROOT, "%.1f%%", rate * 100);
    }
}
