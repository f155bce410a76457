package io.kvtier.store.disk;

/** What the start-up scan found: regions, intact records, and records dropped as torn or corrupt (with their bytes). */
public record RecoveryStats(int regions, long records, long bytes, long droppedRecords, long droppedBytes,
                            long millis) {
}
