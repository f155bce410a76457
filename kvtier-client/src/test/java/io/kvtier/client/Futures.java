package io.kvtier.client;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Test helpers for futures that are expected to fail. */
final class Futures {
    private Futures() {
    }

    /** Waits up to 5 s for {@code future} to fail and returns why; an AssertionError if it succeeds or hangs. */
    static Throwable failure(CompletableFuture<?> future) {
        try {
            future.get(5, TimeUnit.SECONDS);
            throw new AssertionError("did not fail");
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (InterruptedException | TimeoutException e) {
            throw new AssertionError(e);
        }
    }
}
