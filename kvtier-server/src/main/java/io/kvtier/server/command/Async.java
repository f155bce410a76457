package io.kvtier.server.command;

import io.kvtier.server.reply.Reply;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;

/** Continues a command after a store future, on the connection's event loop, without a hop when already done. */
final class Async {
    private Async() {
    }

    /**
     * Applies {@code next} to the result of {@code f}: inline if {@code f} is already complete (the common case,
     * memory-only operations), otherwise on the reply's event loop. Returns null when everything completed inline.
     */
    static <T> CompletableFuture<Void> then(CompletableFuture<T> f, Reply reply,
                                            Function<T, CompletableFuture<Void>> next) {
        if (f.isDone() && !f.isCompletedExceptionally()) {
            return next.apply(f.join());
        }
        // handleAsync, not thenComposeAsync: a failure must reach the event loop too, since the error reply is
        // written there (a failed future would otherwise complete dependents on the thread that failed it).
        return f.handleAsync((t, e) -> {
            if (e != null) {
                return CompletableFuture.<Void>failedFuture(e);
            }
            CompletableFuture<Void> n = next.apply(t);
            return n == null ? CompletableFuture.<Void>completedFuture(null) : n;
        }, reply.executor()).thenCompose(n -> n);
    }

    /**
     * Runs {@code body}, then {@code after} exactly once: at once if {@code body} throws or completes inline (returns
     * null), else when its future completes. Returns what {@code body} returned.
     */
    static CompletableFuture<Void> andFinally(Supplier<CompletableFuture<Void>> body, Runnable after) {
        CompletableFuture<Void> f;
        try {
            f = body.get();
        } catch (RuntimeException e) {
            after.run();
            throw e;
        }
        if (f == null) {
            after.run();
            return null;
        }
        return f.whenComplete((v, e) -> after.run());
    }
}
