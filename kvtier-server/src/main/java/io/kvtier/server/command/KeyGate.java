package io.kvtier.server.command;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * Isolation of transactions and scripts from other clients' commands on the same keys. kvtier runs commands of
 * different connections in parallel (one event loop each), so Redis's "nothing runs between the commands of an EXEC"
 * needs a rule: every keyed command holds its keys' hash stripes <em>shared</em> while it runs (commands among
 * themselves keep running in parallel, as before), and a transaction or script holds its keys' stripes
 * <em>exclusively</em>, so that none of those commands runs in the middle of it.
 *
 * <p>Nobody blocks a thread. A command that finds a stripe held or wanted exclusively gives back what it took and
 * retries when that stripe is next free (so it never waits while holding anything, and cannot deadlock); an exclusive
 * holder takes its stripes in increasing order, waiting for the shared holders of each to finish, while new shared
 * entries queue behind it (so a steady stream of commands cannot starve a transaction). Thread-safe.
 */
public final class KeyGate {
    static final int STRIPES = 4096;

    private final Stripe[] stripes = new Stripe[STRIPES];

    public KeyGate() {
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new Stripe();
        }
    }

    /** The distinct stripes of {@code keys}, in increasing order (the order exclusive holders take them in). */
    static int[] stripesOf(byte[][] keys) {
        if (keys.length == 1) {
            return new int[] {stripe(keys[0])};
        }
        int[] s = new int[keys.length];
        for (int i = 0; i < keys.length; i++) {
            s[i] = stripe(keys[i]);
        }
        return Arrays.stream(s).sorted().distinct().toArray();
    }

    private static int stripe(byte[] key) {
        return Math.floorMod(Arrays.hashCode(key) * 0x9E3779B9, STRIPES);
    }

    /**
     * Enters {@code stripes} shared if none is held or wanted exclusively: returns null, and the caller must
     * {@link #leaveShared} them once its command is over. Otherwise enters none and returns a future that completes
     * when the first blocked stripe is free again, after which the caller tries again.
     */
    CompletableFuture<Void> tryShared(int[] stripes) {
        for (int i = 0; i < stripes.length; i++) {
            CompletableFuture<Void> blocked = this.stripes[stripes[i]].tryShared();
            if (blocked != null) {
                for (int j = 0; j < i; j++) {
                    this.stripes[stripes[j]].leaveShared();
                }
                return blocked;
            }
        }
        return null;
    }

    /**
     * Completes on {@code executor} once {@code stripes} are entered shared (retrying as {@link #tryShared} says);
     * the caller must {@link #leaveShared} them once its command is over.
     */
    CompletableFuture<Void> enterShared(int[] stripes, Executor executor) {
        CompletableFuture<Void> entered = new CompletableFuture<>();
        retryShared(stripes, executor, entered);
        return entered;
    }

    private void retryShared(int[] stripes, Executor executor, CompletableFuture<Void> entered) {
        CompletableFuture<Void> blocked = tryShared(stripes);
        if (blocked == null) {
            executor.execute(() -> entered.complete(null));
        } else {
            blocked.whenComplete((v, e) -> retryShared(stripes, executor, entered));
        }
    }

    void leaveShared(int[] stripes) {
        for (int s : stripes) {
            this.stripes[s].leaveShared();
        }
    }

    /**
     * Completes with the unlock action once every stripe of {@code keys} is held exclusively: no command on them runs
     * and none starts until the action runs (exactly once). With no keys, completes at once.
     */
    public CompletableFuture<Runnable> exclusive(byte[][] keys) {
        if (keys.length == 0) {
            return CompletableFuture.completedFuture(() -> { });
        }
        int[] sorted = stripesOf(keys);
        CompletableFuture<Void> acquired = CompletableFuture.completedFuture(null);
        for (int s : sorted) {
            acquired = acquired.thenCompose(v -> stripes[s].exclusive());
        }
        return acquired.thenApply(v -> () -> {
            for (int s : sorted) {
                stripes[s].leaveExclusive();
            }
        });
    }

    /** One stripe: a reader-writer lock whose waiters are futures. */
    private static final class Stripe {
        private int shared;
        private boolean exclusive;
        private final ArrayDeque<CompletableFuture<Void>> exclusiveWaiters = new ArrayDeque<>(0);
        /** Completed (and replaced) whenever shared entry may be tried again. */
        private CompletableFuture<Void> sharedRetry;

        CompletableFuture<Void> tryShared() {
            synchronized (this) {
                if (!exclusive && exclusiveWaiters.isEmpty()) {
                    shared++;
                    return null;
                }
                if (sharedRetry == null) {
                    sharedRetry = new CompletableFuture<>();
                }
                return sharedRetry;
            }
        }

        void leaveShared() {
            CompletableFuture<Void> grant = null;
            synchronized (this) {
                shared--;
                if (shared == 0 && !exclusiveWaiters.isEmpty()) {
                    exclusive = true;
                    grant = exclusiveWaiters.poll();
                }
            }
            if (grant != null) {
                grant.complete(null);
            }
        }

        CompletableFuture<Void> exclusive() {
            synchronized (this) {
                if (!exclusive && shared == 0 && exclusiveWaiters.isEmpty()) {
                    exclusive = true;
                    return CompletableFuture.completedFuture(null);
                }
                CompletableFuture<Void> wait = new CompletableFuture<>();
                exclusiveWaiters.add(wait);
                return wait;
            }
        }

        void leaveExclusive() {
            CompletableFuture<Void> grant = null;
            CompletableFuture<Void> retry = null;
            synchronized (this) {
                if (!exclusiveWaiters.isEmpty()) {
                    grant = exclusiveWaiters.poll(); // stays exclusive, handed over
                } else {
                    exclusive = false;
                    retry = sharedRetry;
                    sharedRetry = null;
                }
            }
            if (grant != null) {
                grant.complete(null);
            }
            if (retry != null) {
                retry.complete(null);
            }
        }
    }
}
