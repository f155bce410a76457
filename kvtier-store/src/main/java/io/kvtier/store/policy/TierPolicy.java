package io.kvtier.store.policy;

/**
 * Orders the items of one tier for eviction. Not thread-safe: callers serialize {@link #add}, {@link #remove} and
 * {@link #nextVictim} with one lock; hits are recorded lock-free through {@link PolicyNode#recordAccess()}.
 */
public interface TierPolicy {
    /** Admits a node that just entered the tier. */
    void add(PolicyNode node);

    /** Forgets a node that left the tier for another reason (deleted, overwritten). No-op if not queued. */
    void remove(PolicyNode node);

    /** Removes and returns the node to evict next, or {@code null} when the tier is empty. */
    PolicyNode nextVictim();

    /**
     * Whether a hit on {@code node} moves it (LRU) and so should be handed to {@link #touch} under the lock; if not,
     * or if the lock is busy, {@link PolicyNode#recordAccess()} without it does.
     */
    default boolean ordersOnTouch(PolicyNode node) {
        return false;
    }

    /** Records a hit (LRU moves the node; S3-FIFO only counts). Must be called under the same lock as the others. */
    default void touch(PolicyNode node) {
        node.recordAccess();
    }
}
