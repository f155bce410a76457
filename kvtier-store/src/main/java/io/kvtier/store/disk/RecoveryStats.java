package io.kvtier.store.disk;

/**
 * What the start-up scan found: regions, intact records, records dropped as torn or damaged (with their bytes),
 * regions quarantined for damage, and the highest sequence number the log names (intact or damaged records).
 */
public record RecoveryStats(int regions, long records, long bytes, long droppedRecords, long droppedBytes,
                            long millis, int damagedRegions, long maxSeq) {
}
