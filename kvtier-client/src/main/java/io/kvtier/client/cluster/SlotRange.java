package io.kvtier.client.cluster;

import io.kvtier.client.HostPort;
import io.kvtier.client.cluster.SlotHash;
import java.util.List;
import java.util.Objects;

/**
 * One entry of a CLUSTER SLOTS reply: the slots {@code start..end} (inclusive), their primary and their replicas.
 * Immutable.
 */
public record SlotRange(int start, int end, HostPort primary, List<HostPort> replicas) {
    public SlotRange {
        if (start < 0 || end >= SlotHash.SLOTS || start > end) {
            throw new IllegalArgumentException("slot range " + start + ".." + end + " is not within 0.."
                    + (SlotHash.SLOTS - 1));
        }
        Objects.requireNonNull(primary, "primary");
        replicas = List.copyOf(replicas);
    }
}
