package io.kvtier.events;

import java.util.List;

/**
 * A batch of store events from one node: {@code node} names it (its advertised host:port), {@code incarnation} changes
 * whenever it restarts (a random number drawn at start), {@code ts} is seconds since the epoch; {@code snapshot} marks a
 * part of a snapshot (every event STORED).
 */
public record StoreEventBatch(String node, long incarnation, double ts, boolean snapshot, List<StoreEvent> events) {
}
