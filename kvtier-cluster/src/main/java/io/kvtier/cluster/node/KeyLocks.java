package io.kvtier.cluster.node;

import io.kvtier.cluster.error.TryAgainException;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Asynchronous per-key mutual exclusion over {@value #STRIPES} hash stripes: a primary applies a write and replicates
 * it while holding its keys, so writes to one key reach the backups in the order they were applied, and a peer reading
 * a key for a state transfer never sees it half-way through a write. Nobody blocks a thread: {@link #lock} returns a
 * future that completes when the stripes are held. Stripes are taken in increasing order, so multi-key holders cannot
 * deadlock. Thread-safe.
 */
public final class KeyLocks {
    static final int STRIPES = 4096;

    private final AtomicReferenceArray<CompletableFuture<Void>> tails = new AtomicReferenceArray<>(STRIPES);

    KeyLocks() {
        for (int i = 0; i < STRIPES; i++) {
            tails.set(i, CompletableFuture.completedFuture(null));
        }
    }

    /** Completes with the unlock action once every stripe of {@code keys} is held; run it exactly once. */
    public CompletableFuture<Runnable> lock(byte[]... keys) {
        int[] stripes = new int[keys.length];
        for (int i = 0; i < keys.length; i++) {
            stripes[i] = Math.floorMod(Arrays.hashCode(keys[i]) * 0x9E3779B9, STRIPES);
        }
        int[] sorted = Arrays.stream(stripes).sorted().distinct().toArray();
        CompletableFuture<Void>[] mine = newArray(sorted.length);
        CompletableFuture<Void> acquired = CompletableFuture.completedFuture(null);
        for (int i = 0; i < sorted.length; i++) {
            int stripe = sorted[i];
            int k = i;
            // Queue behind the stripe only once the lower ones are held: taking all tails at once would let two
            // multi-key holders interleave their queues (A before B on one stripe, B before A on another).
            acquired = acquired.thenCompose(v -> {
                mine[k] = new CompletableFuture<>();
                return tails.getAndSet(stripe, mine[k]);
            });
        }
        return acquired.thenApply(v -> () -> {
            for (CompletableFuture<Void> f : mine) {
                f.complete(null);
            }
        });
    }

    /**
     * Like {@link #lock}, giving up at {@code deadlineNanos} (System.nanoTime()): the future then fails with
     * TRYAGAIN (the caller did not run), and the stripes, once they come, are released at once, so an abandoned
     * waiter holds no one up.
     */
    public CompletableFuture<Runnable> lockBefore(long deadlineNanos, byte[]... keys) {
        CompletableFuture<Runnable> result = new CompletableFuture<>();
        lock(keys).thenAccept(unlock -> {
            if (!result.complete(unlock)) {
                unlock.run();
            }
        });
        if (result.isDone()) {
            return result;
        }
        result.orTimeout(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
        return result.exceptionallyCompose(e -> CompletableFuture.failedFuture(e instanceof TimeoutException
                ? new TryAgainException("the key is held by a write its backups have not confirmed yet, or queued"
                + " behind one; not run") : e));
    }

    @SuppressWarnings("unchecked")
    private static CompletableFuture<Void>[] newArray(int n) {
        return new CompletableFuture[n];
    }
}
