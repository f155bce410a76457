package io.kvtier.kvcache.simulate;

import io.kvtier.store.policy.ChainNode;

/**
 * One stored chunk as the simulator's store sees it: where its (imaginary) bytes are, like the store's entry, and
 * the links the real S3-FIFO policy orders it by. An entry in memory may also have a disk copy ("clean"); one with
 * neither is gone. Owned by one {@link TierModel}; not thread-safe.
 */
final class ChunkEntry extends ChainNode {
    final long key;
    final long length;
    private final long fingerprint;
    boolean inMemory;
    RegionLogModel.Region region; // the disk copy, or null
    int diskHits;
    boolean read;                 // read from memory since it was stored (DiskAdmission's rule)

    ChunkEntry(long key, long length) {
        this.key = key;
        this.length = length;
        this.fingerprint = mix(key);
    }

    @Override
    public long weight() {
        return length;
    }

    @Override
    public long fingerprint() {
        return fingerprint;
    }

    /** SplitMix64's finalizer: a bijection, so distinct keys keep distinct fingerprints (no ghost collisions). */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
