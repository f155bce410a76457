package io.kvtier.store;

import io.kvtier.store.policy.KvCachePolicy;

/*
 * Which values leaving memory the disk tier takes, when the operator caps its write rate (--disk-write-limit).
 *
 * Without a cap (the default) every value leaving memory is written: eviction from memory is demotion, never loss.
 * On a KV-cache workload that is nearly every chunk ever stored (Mooncake's conversation trace: 3.0-3.3 GB/s of
 * demotions for an 8B model, docs/simulate.md), which a drive's endurance may not allow. With a cap:
 *  - a value that was read while in memory, or is smaller than a KV-cache chunk (KvCachePolicy.LARGE_BYTES), is
 *    always written: it has shown it comes back, or costs little;
 *  - a chunk never read since it was written is written while the rate's token bucket has room for it. The bucket
 *    holds ten seconds of the rate, at least 64 MiB: with one second, a 100,000-token prompt's chunks emptied it, the
 *    quiet second after it overflowed, and Mooncake's conversation trace wrote 1.2 GB/s under a 2 GiB/s cap; with
 *    ten, the cap. Tokens go in runs: the chunks a demotion batch meets together, typically one prompt's, are written
 *    together or dropped together (a chain with one chunk missing is worth nothing past it, so admission by key hash
 *    costs far more hits: docs/simulate.md);
 *  - a dropped chunk leaves its key's fingerprint in a fixed table (2^20 slots, 8 MiB; a newer key in the same slot
 *    replaces it). If it is stored again (its conversation came back, missed, and was recomputed) and leaves memory
 *    again, it is written whatever the bucket holds: a second chance, which Dynamo KVBM's admission on a second
 *    access and CacheLib's rejection of first-time items give too.
 * Everything written, admitted by any rule, takes its bytes from the bucket, which may go into debt by up to one
 * burst, so the rate of demotion writes stays near the cap unless the always-written values alone exceed it.
 *
 * A dropped value is lost as an evicted disk region's values are (the key is gone; KV events say so). The shutdown
 * flush writes everything, cap or not. What the cap costs in hit rate: `kvtier simulate --disk-write-limit`.
 */
/** The disk tier's admission rule under a write-rate cap: see the essay above. Not thread-safe (the writer's). */
public final class DiskAdmission {
    /** Fingerprints of dropped chunks remembered for their second chance. */
    public static final int GHOST_SLOTS = 1 << 20;
    /** The bucket holds this many seconds of the rate: enough for a long prompt's chunks and a burst of requests. */
    public static final long BURST_SECONDS = 10;
    /** The bucket holds at least this much, so that any chunk can be admitted once it is full. */
    public static final long MIN_BURST = 64L << 20;

    private final long bytesPerSecond; // 0: no cap
    private final long burst;
    private final long[] ghosts;
    private double tokens;
    private long lastNanos;
    private boolean started;

    /** @param bytesPerSecond the cap on demotion writes; 0 for none (every value leaving memory is written) */
    public DiskAdmission(long bytesPerSecond) {
        if (bytesPerSecond < 0) {
            throw new IllegalArgumentException("disk write limit " + bytesPerSecond + " must be 0 (none) or positive");
        }
        this.bytesPerSecond = bytesPerSecond;
        this.burst = Math.max(Math.multiplyExact(bytesPerSecond, BURST_SECONDS), MIN_BURST);
        this.ghosts = bytesPerSecond == 0 ? null : new long[GHOST_SLOTS];
        this.tokens = burst;
    }

    public boolean limited() {
        return bytesPerSecond != 0;
    }

    public long bytesPerSecond() {
        return bytesPerSecond;
    }

    /**
     * Whether a value of {@code length} bytes leaving memory at {@code nowNanos} is written to disk ({@code false}:
     * it is dropped); charges the bucket for what is written.
     *
     * @param read whether the value was read since it was written
     */
    public boolean admits(long fingerprint, long length, boolean read, long nowNanos) {
        if (bytesPerSecond == 0) {
            return true;
        }
        refill(nowNanos);
        int slot = slot(fingerprint);
        long mark = fingerprint == 0 ? 1 : fingerprint;
        boolean admit = read || length < KvCachePolicy.LARGE_BYTES || ghosts[slot] == mark || tokens >= length;
        if (admit) {
            if (ghosts[slot] == mark) {
                ghosts[slot] = 0; // a second chance is given once
            }
            tokens = Math.max(-burst, tokens - length);
        } else {
            ghosts[slot] = mark;
        }
        return admit;
    }

    private void refill(long nowNanos) {
        if (started) {
            long elapsed = nowNanos - lastNanos;
            if (elapsed > 0) {
                tokens = Math.min(burst, tokens + elapsed * 1e-9 * bytesPerSecond);
            }
        }
        if (!started || nowNanos > lastNanos) {
            lastNanos = nowNanos;
        }
        started = true;
    }

    private static int slot(long fingerprint) {
        long h = fingerprint * 0x9E3779B97F4A7C15L;
        return (int) (h >>> (64 - 20));
    }
}
