package io.kvtier.store;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The heap the key index may take, charged per key: {@link #BYTES_PER_KEY} of fixed overhead plus the key's bytes
 * (rounded up to 8, as the JVM lays out arrays). A key is charged when it enters the index and refunded when it
 * leaves it; overwriting an existing key costs nothing. Thread-safe and exact: {@link #tryCharge} never lets the
 * total pass the budget, though {@link #forceCharge} (recovery) may.
 *
 * <p>The overhead is measured, not guessed ({@code IndexFootprintTest}, issues 10 and 34): per key of a small value the
 * index holds an {@code Entry} (72 B, holding the key's bytes: 16 B of array header), its two table slots (a tag and
 * a reference, 8 B, at a load of 3/8 to 3/4: 11-21 B) and either a {@code MemoryValue} (32 B) or a
 * {@code DiskLocation} (32 B) plus its slot in the disk writer's per-region list: 150-155 B measured with a 16-byte
 * key (before issue 34, with a map node and a {@code Key} a key and a 40-byte {@code MemoryValue}, 215-218 B). The
 * charge rounds that up by about a fifth so that it also covers recovery's peak (see IndexBuilder); the launcher's
 * heap adds a quarter for the garbage collector. Outside the charge, in the launcher's fixed headroom: S3-FIFO's
 * ghosts, at most about 24 MiB for their million fingerprints (GhostSet).
 */
public final class IndexBudget {
    /** Fixed heap per key besides the key's own bytes. */
    public static final int BYTES_PER_KEY = 176;
    /** The smallest budget accepted: about 5,400 small keys. */
    public static final long MIN_BYTES = 1L << 20;
    /** The smallest default budget: about 350,000 small keys. */
    public static final long MIN_DEFAULT_BYTES = 64L << 20;
    /**
     * The largest default budget: about 22 M small keys, a heap of about 5.8 GiB. Terabytes of disk hold KV-cache
     * chunks of megabytes, so an eighth of them would size a heap for keys that never come; a store of billions of tiny
     * values says so with --index-memory.
     */
    public static final long MAX_DEFAULT_BYTES = 4L << 30;

    private final long budget;
    private final AtomicLong used = new AtomicLong();
    private final AtomicLong keys = new AtomicLong();

    IndexBudget(long budgetBytes) {
        this.budget = budgetBytes;
    }

    /**
     * The default budget for a store of {@code memoryBytes} and {@code diskBytes}: an eighth of their sum, at least
     * {@link #MIN_DEFAULT_BYTES} and at most {@link #MAX_DEFAULT_BYTES}: room for keys of values averaging about 1.5
     * KiB or more (keys of 16 bytes) until both tiers are full, so only stores of smaller values meet the limit before
     * their data budgets.
     */
    public static long defaultBytes(long memoryBytes, long diskBytes) {
        return Math.min(MAX_DEFAULT_BYTES, Math.max(MIN_DEFAULT_BYTES, (memoryBytes + diskBytes) / 8));
    }

    /** Heap one key of {@code keyLength} bytes is charged. */
    public static long charge(int keyLength) {
        return BYTES_PER_KEY + ((keyLength + 7L) & ~7L);
    }

    /** Charges a new key if the budget has room for it; returns whether it did. */
    boolean tryCharge(int keyLength) {
        long c = charge(keyLength);
        for (long u = used.get(); u + c <= budget; u = used.get()) {
            if (used.compareAndSet(u, u + c)) {
                keys.incrementAndGet();
                return true;
            }
        }
        return false;
    }

    /** Charges a key whatever the budget says (a recovered key must be served). */
    void forceCharge(int keyLength) {
        used.addAndGet(charge(keyLength));
        keys.incrementAndGet();
    }

    /** Refunds a key that left the index. */
    void refund(int keyLength) {
        used.addAndGet(-charge(keyLength));
        keys.decrementAndGet();
    }

    IndexFullException full() {
        return new IndexFullException(keys.get(), used.get(), budget);
    }

    public long budget() {
        return budget;
    }

    public long used() {
        return used.get();
    }

    public boolean isOver() {
        return used.get() > budget;
    }
}
