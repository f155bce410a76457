package io.kvtier.store;

import java.util.EnumSet;
import java.util.Set;

/**
 * Where an entry's bytes are. The allowed moves, checked on every transition:
 * <pre>
 *   MEMORY ──demoter picks it (dirty)──▶ DEMOTING ──record written──▶ DISK
 *     │  ▲                                  │
 *     │  └──write failed, back in memory────┘
 *     ├──demoter picks it (clean: already on disk)──────────────────▶ DISK
 *     ├──demoter picks it, the disk write limit refuses it (DiskAdmission)──▶ EVICTED
 *     └──▶ DELETED (DEL, overwrite, expiry, FLUSHALL)                   │
 *   DISK ──second hit: promoted, keeps its disk copy (clean)──▶ MEMORY  │
 *   DISK ──its region evicted for room (the only real loss)──▶ EVICTED  │
 *   DISK, DEMOTING ──▶ DELETED ◀────────────────────────────────────────┘
 * </pre>
 * A value being received is not an entry yet ("WRITING" lives in the server's bulk sink); it becomes one in MEMORY.
 */
enum EntryState {
    MEMORY, DEMOTING, DISK, EVICTED, DELETED;

    private Set<EntryState> next;

    static {
        MEMORY.next = EnumSet.of(DEMOTING, DISK, EVICTED, DELETED);
        DEMOTING.next = EnumSet.of(DISK, MEMORY, DELETED);
        DISK.next = EnumSet.of(MEMORY, EVICTED, DELETED);
        EVICTED.next = EnumSet.noneOf(EntryState.class);
        DELETED.next = EnumSet.noneOf(EntryState.class);
    }

    /** Returns {@code to} if the move is allowed, else throws: a wrong move is a bug, never a condition to handle. */
    EntryState checkedMove(EntryState to) {
        if (!next.contains(to)) {
            throw new IllegalStateException("illegal entry transition " + this + " -> " + to);
        }
        return to;
    }

    boolean isLive() {
        return this == MEMORY || this == DEMOTING || this == DISK;
    }
}
