package io.kvtier.cluster;

import java.util.List;

/**
 * A maximal range of consecutive slots, {@code start..end} inclusive, that share their owners, as
 * {@link SlotTable#ranges()} and {@link SlotTable#primaryRanges()} list them for CLUSTER SLOTS, SHARDS and NODES.
 *
 * @param start  the first slot of the range
 * @param end    the last slot of the range, inclusive as in CLUSTER SLOTS
 * @param owners the owners of every slot of the range, primary first; only the primary in
 *               {@link SlotTable#primaryRanges()}
 */
public record SlotRange(int start, int end, List<Member> owners) {
    public SlotRange {
        owners = List.copyOf(owners);
    }

    /** The primary of every slot of the range. */
    public Member primary() {
        return owners.getFirst();
    }

    /** The number of slots in the range. */
    public int size() {
        return end - start + 1;
    }
}
