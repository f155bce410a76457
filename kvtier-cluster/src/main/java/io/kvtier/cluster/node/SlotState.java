package io.kvtier.cluster.node;

import java.util.EnumSet;
import java.util.Set;

/**
 * What this node holds of one slot. The allowed moves, checked on every transition (staying put is always allowed):
 * <pre>
 *   NONE ──owner under a new table, others may hold newer data──▶ IMPORTING ──every key fetched──▶ COMPLETE
 *   NONE ──owner and alone, or kept on rejoining (no newer copy anywhere)──────────────────────▶ COMPLETE
 *   IMPORTING, COMPLETE ──not an owner any more, a minority table, stale on rejoining──▶ NONE
 * </pre>
 * COMPLETE never goes back to IMPORTING: a complete owner stays complete under a new table that keeps it an owner.
 */
enum SlotState {
    NONE, IMPORTING, COMPLETE;

    private Set<SlotState> next;

    static {
        NONE.next = EnumSet.of(NONE, IMPORTING, COMPLETE);
        IMPORTING.next = EnumSet.of(IMPORTING, COMPLETE, NONE);
        COMPLETE.next = EnumSet.of(COMPLETE, NONE);
    }

    /** Returns {@code to} if the move is allowed, else throws: a wrong move is a bug, never a condition to handle. */
    SlotState checkedMove(SlotState to) {
        if (!next.contains(to)) {
            throw new IllegalStateException("illegal slot transition " + this + " -> " + to);
        }
        return to;
    }
}
