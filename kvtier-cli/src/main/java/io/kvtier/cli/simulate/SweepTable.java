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

    private SweepTable() {
    }

    static String format(List<SimulationResult> results, boolean blocks) {
        return format(results, blocks, false);
    }

    /**
     * @param blocks   whether to add the {@code BLK HIT} and {@code ALL BLK} columns (a trace whose requests name
     *                 their blocks): hits over full blocks, and over every block, partial last ones too
     * @param policies whether to add the {@code POLICY} column (several policies compared)
     */
    static String format(List<SimulationResult> results, boolean blocks, boolean policies) {
        boolean limits = results.stream().anyMatch(r -> r.budget().diskWriteLimit() > 0);
        StringBuilder out = new StringBuilder();
        out.append(row(blocks, policies, limits, "MEMORY", "DISK", "TOTAL", "W LIMIT", "POLICY", "HIT", "BLK HIT",
                "ALL BLK", "MEM HIT", "DISK HIT", "READ MEM", "READ DISK", "WRITTEN", "TO DISK", "EVICTED"));
        for (SimulationResult r : results) {
            long limit = r.budget().diskWriteLimit();
            out.append(row(blocks, policies, limits, Units.bytes(r.budget().memoryBytes()),
                    Units.bytes(r.budget().diskBytes()), Units.bytes(r.budget().totalBytes()),
                    limit == 0 ? "none" : Units.bytes(limit) + "/s", r.policy().label(),
                    percent(r.hitRate()), percent(r.chunkHitRate()), percent(r.allChunkHitRate()),
                    percent(r.memoryHitRate()), percent(r.diskHitRate()), Units.bytes(r.memoryReadBytes()),
                    Units.bytes(r.diskReadBytes()), Units.bytes(r.writtenBytes()), Units.bytes(r.diskWrittenBytes()),
                    Units.bytes(r.evictedBytes())));
        }
        return out.toString();
    }

    /**
     * One line: the write limit (4th cell) only with {@code limits}, the policy (5th) only with {@code policies},
     * the block rates (7th, 8th) with {@code blocks}.
     */
    private static String row(boolean blocks, boolean policies, boolean limits, String... cells) {
        StringBuilder format = new StringBuilder("  %-9s %-9s %-9s");
        List<Object> shown = new ArrayList<>(List.of(cells[0], cells[1], cells[2]));
        if (limits) {
            format.append(" %-11s");
            shown.add(cells[3]);
        }
        if (policies) {
            format.append(" %-7s");
            shown.add(cells[4]);
        }
        format.append(" %8s");
        shown.add(cells[5]);
        if (blocks) {
            format.append(" %8s %8s");
            shown.add(cells[6]);
            shown.add(cells[7]);
        }
        format.append(" %8s %8s  %-10s %-10s %-10s %-10s %-10s%n");
        for (int i = 8; i < cells.length; i++) {
            shown.add(cells[i]);
        }
        return String.format(Locale.ROOT, format.toString(), shown.toArray());
    }

    static String percent(double rate) {
        return String.format(Locale.ROOT, "%.1f%%", rate * 100);
    }
}
