package io.kvtier.cluster.node;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Versions of replicated key states, so that a backup never puts an older state of a key over a newer one, whatever
 * the nodes' clocks say (the {@code epoch:deadline} stamp only bounds how late a request may run, by wall clock).
 *
 * <p>As a primary, a node stamps each state it writes with {@link #next}: the slot-table epoch in the high 24 bits and a
 * node-local counter in the low 40 (a trillion writes per epoch), so a new primary's states (a later epoch) are above
 * any its predecessor wrote, and one node's are increasing. The store keeps each value's version with it, on every
 * node that holds that state (the primary, its backups, an importer's copy): equal versions mean equal values, which
 * is how two copies of a slot find the keys they differ in without comparing bytes. A node's counter starts above
 * every version its store recovered and every version it applies or copies ({@link #observe}), so it never hands out
 * a number another state of a key already has. A refusal carries the backup's newest version, which {@link #observe}
 * moves the counter past and {@link #refusedNewest} remembers, so the retry is sent with a new, higher version.
 *
 * <p>As a backup, a node keeps a fixed table of {@value #BUCKETS} longs indexed by a hash of the key: the highest
 * version applied to any key of the bucket. A state below its bucket's maximum is refused ({@link #admit}); keys that
 * share a bucket only cost a retry with a newer version, never a stale state accepted, in constant memory (512 KiB).
 * Thread-safe; the caller holds the key's replica lock across {@link #admit} and the apply, so two states of one key
 * cannot pass the check in one order and be applied in the other.
 */
public final class StateVersions {
    /** Buckets of the backup's table; a power of two. */
    static final int BUCKETS = 1 << 16;

    /** Bits of a version below the epoch. */
    static final int COUNTER_BITS = 40;

    private final AtomicLong clock = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLongArray applied = new AtomicLongArray(BUCKETS);

    /** A new version for a state written under {@code epoch}: above every version this node has issued or observed. */
    public long next(long epoch) {
        long floor = epoch << COUNTER_BITS;
        return clock.updateAndGet(c -> Math.max(c + 1, floor));
    }

    /** The epoch a version was issued under. */
    public static long epochOf(long version) {
        return version >>> COUNTER_BITS;
    }

    /** Moves the counter to at least {@code version} (one applied, copied or recovered here). */
    public void observe(long version) {
        clock.accumulateAndGet(version, Math::max);
    }

    /** A backup refused a state as older than its {@code newest}: the counter passes it and retries take a new one. */
    public void refusedBelow(long newest) {
        observe(newest);
        refused.accumulateAndGet(newest, Math::max);
    }

    /** The highest version a refusal named: a stored version at or below it must be replaced before it is resent. */
    public long refusedNewest() {
        return refused.get();
    }

    /** The highest version applied in {@code key}'s bucket (0 when none). */
    public long newest(byte[] key) {
        return applied.get(bucket(key));
    }

    /**
     * Whether the states of {@code keys}, all at {@code version}, may be applied: none is below its bucket's maximum.
     * If so, records {@code version} in their buckets; if not, records nothing.
     */
    public boolean admit(byte[][] keys, long version) {
        for (byte[] key : keys) {
            if (version < applied.get(bucket(key))) {
                return false;
            }
        }
        for (byte[] key : keys) {
            applied.accumulateAndGet(bucket(key), version, Math::max);
        }
        return true;
    }

    /** The highest bucket maximum among {@code keys}: what a refusal tells the primary to exceed. */
    public long newest(byte[][] keys) {
        long max = 0;
        for (byte[] key : keys) {
            max = Math.max(max, newest(key));
        }
        return max;
    }

    static int bucket(byte[] key) {
        return (Arrays.hashCode(key) * 0x9E3779B9 >>> 16) & (BUCKETS - 1);
    }
}
