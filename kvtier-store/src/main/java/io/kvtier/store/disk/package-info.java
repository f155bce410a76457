/**
 * The disk tier: a log of immutable, checksummed records in region files under the data directory, written
 * sequentially by one writer thread, evicted whole (oldest first) when the disk budget is full, and scanned on
 * start-up to rebuild the index, damage reported by key (RegionScanner). See {@link io.kvtier.store.disk.RecordFormat}
 * for the on-disk layout (version 2; a version 1 directory is refused) and DataDirLock for the one-process rule.
 */
package io.kvtier.store.disk;
