package io.kvtier.cluster;

import java.util.Objects;

/**
 * A cluster node as placement sees it: a stable identity and a capacity weight. The id alone decides the node's
 * hash scores, so a node that restarts under the same id gets its slots back; the weight (e.g. memory + disk bytes)
 * decides its share of slots.
 *
 * @param id     the node's identity, non-blank and unique within a membership
 * @param weight the node's capacity, positive; only ratios between members matter
 */
public record Member(String id, long weight) {
    public Member {
        Objects.requireNonNull(id, "member id");
        if (id.isBlank()) {
            throw new IllegalArgumentException("member id \"" + id + "\" is blank");
        }
        if (weight <= 0) {
            throw new IllegalArgumentException("member " + id + " weight " + weight + " must be positive");
        }
    }
}
