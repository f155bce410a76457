package io.kvtier.kvcache.simulate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Replays one trace for every budget of a sweep, each budget on a store of its own, in parallel on up to
 * {@code threads} threads (the trace is shared and read-only). Results come back in the budgets' order, with the
 * unlimited-memory ceiling. Stateless.
 */
public final class Sweep {
    /** A sweep's results, the ceiling and how long it took. */
    public record Outcome(List<SimulationResult> results, SimulationResult unlimited, Duration elapsed) {
    }

    private Sweep() {
    }

    /**
     * @throws IllegalArgumentException if the trace cannot be cut into these chunks or a budget cannot hold one;
     *                                  checked before any runs
     */
    public static Outcome run(ChunkedTrace trace, ChunkOptions chunks, List<Budget> budgets, int threads) {
        return run(trace, chunks, budgets, List.of(Policy.KVTIER), threads);
    }

    /** Every budget with every one of {@code policies}: results budget-major, in the order given. */
    public static Outcome run(ChunkedTrace trace, ChunkOptions chunks, List<Budget> budgets, List<Policy> policies,
                              int threads) {
        Replay.checkReplayable(trace, chunks);
        for (Budget b : budgets) {
            Replay.checkTimed(trace, b);
            String refusal = TierModel.refusal(b, chunks.chunkBytes());
            if (refusal != null) {
                throw new IllegalArgumentException(refusal);
            }
        }
        long start = System.nanoTime();
        List<SimulationResult> results = new ArrayList<>();
        try (ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, Math.min(threads, budgets.size() * policies.size())),
                Thread.ofPlatform().name("kvtier-simulate-", 0).daemon().factory())) {
            Future<SimulationResult> unlimited = pool.submit(() -> Replay.unlimited(trace, chunks));
            List<Future<SimulationResult>> futures = new ArrayList<>();
            for (Budget b : budgets) {
                for (Policy p : policies) {
                    futures.add(pool.submit(() -> Replay.run(trace, chunks, b, p)));
                }
            }
            for (Future<SimulationResult> f : futures) {
                results.add(get(f));
            }
            return new Outcome(List.copyOf(results), get(unlimited), Duration.ofNanos(System.nanoTime() - start));
        }
    }

    private static SimulationResult get(Future<SimulationResult> f) {
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException(e.getCause());
        }
    }
}
