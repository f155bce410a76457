package io.kvtier.kvcache.simulate;

/** Byte and event counts of one simulated store, as its INFO would report them. Mutable; one owner thread. */
final class TierCounters {
    long memoryReadBytes;
    long diskReadBytes;
    long writtenBytes;
    long diskWrittenBytes;
    long evictedBytes;
    long evictions;
    long promotions;
    long admissionDroppedBytes; // left memory unread, refused by the disk write limit (also in evictedBytes)
}
