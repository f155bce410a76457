package io.kvtier.cluster.topology;

import io.kvtier.cluster.Placement;
import io.kvtier.cluster.SlotTable;
import java.util.List;

/**
 * The slot table a node has installed and the highest epoch it has seen. Invariant: the installed epoch only grows
 * (a table is installed only if its epoch is above the installed one) and never exceeds {@link #maxSeenEpoch()}.
 * Thread-safe.
 */
final class InstalledTable {
    private SlotTable current = Placement.compute(0, List.of(), 0);
    private long maxSeenEpoch;
    private long staleCount;

    /** Installs {@code table} if its epoch is above the installed one; otherwise counts it as stale. */
    synchronized boolean offer(SlotTable table) {
        observe(table.epoch());
        if (table.epoch() <= current.epoch()) {
            staleCount++;
            return false;
        }
        current = table;
        return true;
    }

    /** Records that {@code epoch} exists somewhere in the cluster, so that {@link #nextEpoch} stays above it. */
    synchronized void observe(long epoch) {
        maxSeenEpoch = Math.max(maxSeenEpoch, epoch);
    }

    /** An epoch above every epoch seen so far, for a table this node is about to publish. */
    synchronized long nextEpoch() {
        return maxSeenEpoch + 1;
    }

    synchronized SlotTable current() {
        return current;
    }

    synchronized long maxSeenEpoch() {
        return maxSeenEpoch;
    }

    /** Tables offered with an epoch at or below the installed one. */
    synchronized long staleCount() {
        return staleCount;
    }
}
