package io.kvtier.kvcache.simulate;

import io.kvtier.store.TieringRules;
import io.kvtier.store.policy.ChainPolicy;
import io.kvtier.store.policy.KvCachePolicy;
import io.kvtier.store.policy.LruPolicy;
import io.kvtier.store.policy.S3FifoPolicy;
import io.kvtier.store.policy.TierPolicy;
import java.util.Locale;

/**
 * The memory tier's eviction order a simulation runs with: the store's own {@code kvtier} (S3-FIFO for small values,
 * LRU for chunks: {@link KvCachePolicy}), plain {@code lru} (every hit moves the chunk to the fresh end), plain
 * {@code s3fifo} (the store's until 2026-12-01), or {@code chain}, an earlier candidate (S3-FIFO whose chunks, linked
 * to the chunk before them in their prompt, skip probation and are ordered tail first; {@link ChainPolicy}). Each is
 * the store's class, fed the simulator's chunk entries.
 */
public enum Policy {
    KVTIER, LRU, S3FIFO, CHAIN;

    /** A fresh policy of this kind for a memory tier of {@code capacity} bytes. */
    TierPolicy create(long capacity) {
        return switch (this) {
            case KVTIER -> new KvCachePolicy(capacity, TieringRules.MAX_GHOSTS);
            case LRU -> new LruPolicy();
            case S3FIFO -> new S3FifoPolicy(capacity, TieringRules.MAX_GHOSTS);
            case CHAIN -> new ChainPolicy(capacity, TieringRules.MAX_GHOSTS);
        };
    }

    /** The name {@code --policy} takes and the table shows. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The policy named {@code name} (as {@link #label}). */
    public static Policy of(String name) {
        for (Policy p : values()) {
            if (p.label().equals(name.trim().toLowerCase(Locale.ROOT))) {
                return p;
            }
        }
        throw new IllegalArgumentException("--policy: unknown policy '" + name + "' (kvtier, lru, s3fifo or chain)");
    }
}
