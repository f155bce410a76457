package io.kvtier.server.command;

import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Exclusive access to a set of keys, asynchronously: {@link #exclusive} completes with the unlock action once no
 * other holder of those keys runs and none can start until unlock. Keys hash to {@value #STRIPES} stripes, taken in
 * increasing order, so holders of several keys cannot deadlock; nobody blocks a thread. Thread-safe.
 * <p>
 * Scripts hold their KEYS here for their whole run. (The owner's KeyGate, which ordinary keyed commands also take,
 * shared, in the Dispatcher, replaces this class when merged; the API is the same.)
 */
public final class KeyGate {
    static final int STRIPES = 4096;

    private final AtomicReferenceArray<CompletableFuture<Void>> tails = new AtomicReferenceArray<>(STRIPES);

    public KeyGate() {
        for (int i = 0; i < STRIPES; i++) {
            tails.set(i, CompletableFuture.completedFuture(null));
        }
    }

    /** Completes with the unlock action once {@code keys} are held exclusively; run it exactly once. */
    public CompletableFuture<Runnable> exclusive(byte[][] keys) {
        int[] stripes = Arrays.stream(keys).mapToInt(k -> Math.floorMod(Arrays.hashCode(k) * 0x9E3779B9, STRIPES))
                .sorted().distinct().toArray();
        @SuppressWarnings("unchecked")
        CompletableFuture<Void>[] mine = new CompletableFuture[stripes.length];
        CompletableFuture<Void> acquired = CompletableFuture.completedFuture(null);
        for (int i = 0; i < stripes.length; i++) {
            int stripe = stripes[i];
            int k = i;
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
}
