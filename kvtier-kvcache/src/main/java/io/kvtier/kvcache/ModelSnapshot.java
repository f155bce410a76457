package io.kvtier.kvcache;

/**
 * One model's KV-cache in this node's store at one moment: chunks held (kv_bytes or whole-chunk keys), all its keys
 * and their bytes, reads of its chunk data by tier and misses (each GET or MGET key of chunk data, each key probed by
 * EXISTS, KVC.PREFIX or KVC.LOOKUP), and chunks the store lost for room.
 */
public record ModelSnapshot(String model, long chunks, long keys, long bytes, long memoryHits, long diskHits,
                            long misses, long lostChunks) {
    /** Hits over lookups, 0 when there were none. */
    public double hitRate() {
        long lookups = memoryHits + diskHits + misses;
        return lookups == 0 ? 0 : (double) (memoryHits + diskHits) / lookups;
    }
}
