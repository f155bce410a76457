/**
 * The disk tier: a log of immutable, checksummed records in region files under the data directory, written
 * sequentially by one writer thread, evicted whole (oldest first) when the disk budget is full, and scanned on
 * start-up to rebuild the index. See {@link io.kvtier.store.disk.RecordFormat} for the on-disk layout.
 */
package io.kvtier.store.disk;
