package io.kvtier.client.cluster;

import io.kvtier.client.HostPort;
import io.kvtier.client.cluster.SlotHash;
import java.util.BitSet;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The primary of each of the 16384 slots as a cluster client last learned it: installed whole from CLUSTER SLOTS and
 * patched one slot at a time by {@code -MOVED}, as Redis Cluster clients keep theirs. A slot no range covered has
 * no primary (null). Thread-safe: lanes read it on every command while refreshes and redirects write it; a reader
 * sees each slot's latest owner, not one consistent snapshot of the whole map (neither does a cluster client).
 */
public final class SlotMap {
    private static final Comparator<HostPort> ORDER = Comparator.comparing(HostPort::host)
            .thenComparingInt(HostPort::port);
    private final AtomicReferenceArray<HostPort> primaries = new AtomicReferenceArray<>(SlotHash.SLOTS);

    /** Replaces the whole map by {@code ranges}. */
    public void install(List<SlotRange> ranges) {
        HostPort[] next = new HostPort[SlotHash.SLOTS];
        for (SlotRange r : ranges) {
            for (int slot = r.start(); slot <= r.end(); slot++) {
                next[slot] = r.primary();
            }
        }
        for (int slot = 0; slot < next.length; slot++) {
            primaries.set(slot, next[slot]);
        }
    }

    /** Records a {@code -MOVED}: this one slot has moved. */
    public void redirect(ClusterError.Moved moved) {
        primaries.set(moved.slot(), moved.target());
    }

    /** The primary of {@code slot}, or null when no range covered it. */
    public HostPort primary(int slot) {
        return primaries.get(slot);
    }

    /** The primary of {@code key}'s slot, or null. */
    public HostPort primaryOf(byte[] key) {
        return primary(SlotHash.slot(key));
    }

    /** Every node that is primary of some slot, ordered by host then port. */
    public Set<HostPort> primaries() {
        Set<HostPort> nodes = new TreeSet<>(ORDER);
        for (int slot = 0; slot < SlotHash.SLOTS; slot++) {
            HostPort p = primaries.get(slot);
            if (p != null) {
                nodes.add(p);
            }
        }
        return nodes;
    }

    /** The slots whose primary is {@code node}, as a bit set indexed by slot. */
    public BitSet slotsOf(HostPort node) {
        BitSet slots = new BitSet(SlotHash.SLOTS);
        for (int slot = 0; slot < SlotHash.SLOTS; slot++) {
            if (node.equals(primaries.get(slot))) {
                slots.set(slot);
            }
        }
        return slots;
    }

    /** Slots with no known primary. */
    public int unassigned() {
        int n = 0;
        for (int slot = 0; slot < SlotHash.SLOTS; slot++) {
            n += primaries.get(slot) == null ? 1 : 0;
        }
        return n;
    }
}
