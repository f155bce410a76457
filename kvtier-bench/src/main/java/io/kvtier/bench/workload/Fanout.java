package io.kvtier.bench.workload;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

/**
 * Runs asynchronous steps for indexes {@code from..to-1} with at most {@code parallelism} in flight, as LMCache's
 * {@code asyncio.gather} over chunks does within its connection limit. Stateless; the steps decide their threads.
 */
final class Fanout {
    private Fanout() {
    }

    static CompletableFuture<Void> run(int from, int to, int parallelism, IntFunction<CompletableFuture<?>> step) {
        AtomicInteger next = new AtomicInteger(from);
        int workers = Math.max(0, Math.min(parallelism, to - from));
        CompletableFuture<?>[] running = new CompletableFuture<?>[workers];
        for (int w = 0; w < workers; w++) {
            running[w] = worker(next, to, step);
        }
        return CompletableFuture.allOf(running);
    }

    private static CompletableFuture<Void> worker(AtomicInteger next, int to, IntFunction<CompletableFuture<?>> step) {
        int i = next.getAndIncrement();
        if (i >= to) {
            return CompletableFuture.completedFuture(null);
        }
        return step.apply(i).thenCompose(ignored -> worker(next, to, step));
    }
}
