package io.kvtier.client.cluster;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * Runs slot-map refreshes on a thread of its own, at most one at a time and at least {@code minInterval} apart
 * however many commands ask: a MOVED storm or a dead node costs one CLUSTER SLOTS per interval, not one per command.
 * {@link #request} returns a future that completes when a refresh that started after the request has finished, so a
 * caller can wait for fresher news than it had. Thread-safe.
 */
final class MapRefresher implements AutoCloseable {
    private final Runnable refresh;
    private final long minIntervalNanos;
    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "kvtier-cluster-slot-refresh");
        t.setDaemon(true);
        return t;
    });
    private final LongAdder runs = new LongAdder();
    private CompletableFuture<Void> pending;
    private long lastStartNanos;

    /** {@code refresh} blocks, and deals with its own failures (it is not retried). */
    MapRefresher(Runnable refresh, long minIntervalMillis) {
        this.refresh = refresh;
        this.minIntervalNanos = TimeUnit.MILLISECONDS.toNanos(minIntervalMillis);
        this.lastStartNanos = System.nanoTime() - minIntervalNanos;
    }

    /** Schedules a refresh unless one is already waiting to start; completes when it has run. */
    synchronized CompletableFuture<Void> request() {
        if (pending == null) {
            pending = new CompletableFuture<>();
            long delay = Math.max(0, lastStartNanos + minIntervalNanos - System.nanoTime());
            CompletableFuture<Void> mine = pending;
            try {
                thread.schedule(this::run, delay, TimeUnit.NANOSECONDS);
            } catch (RuntimeException rejected) { // closed
                pending = null;
                mine.complete(null);
            }
            return mine;
        }
        return pending;
    }

    /** Refreshes that have run. */
    long runs() {
        return runs.sum();
    }

    private void run() {
        CompletableFuture<Void> done;
        synchronized (this) {
            done = pending;
            pending = null;
            lastStartNanos = System.nanoTime();
        }
        try {
            refresh.run();
        } finally {
            runs.increment();
            done.complete(null);
        }
    }

    /** Stops the thread; a refresh waiting to start completes at once (callers then see the map they had). */
    @Override
    public void close() {
        thread.shutdownNow();
        synchronized (this) {
            if (pending != null) {
                pending.complete(null);
                pending = null;
            }
        }
    }
}
