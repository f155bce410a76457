package io.kvtier.store.policy;

/**
 * Intrusive queue links and access frequency of one cached item. Links are guarded by the owning policy's caller
 * (one lock); {@link #recordAccess()} is lock-free and may race, which only costs an occasional lost increment.
 */
public abstract class PolicyNode {
    PolicyNode prev;
    PolicyNode next;
    byte queue;              // 0 = none, 1 = small/probation, 2 = main
    private volatile byte freq;   // 0..3; a byte keeps the subclass Entry small (issue 10)

    /** Bytes this item weighs against the policy's capacity. */
    public abstract long weight();

    /** A 64-bit hash of the item's key: S3-FIFO remembers evicted keys by it. */
    public abstract long fingerprint();

    /** Records a hit; frequency saturates at 3 as in S3-FIFO. */
    public final void recordAccess() {
        byte f = freq;
        if (f < 3) {
            freq = (byte) (f + 1);
        }
    }

    final int freq() {
        return freq;
    }

    final void freq(int f) {
        freq = (byte) f;
    }

    /** Whether the node currently sits in a policy queue. */
    public final boolean isQueued() {
        return queue != 0;
    }
}
