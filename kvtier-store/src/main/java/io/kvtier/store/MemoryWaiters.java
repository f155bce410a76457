package io.kvtier.store;

import io.kvtier.store.memory.MemoryTier;
import io.kvtier.store.memory.MemoryValue;
import io.kvtier.store.memory.SlabMapException;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;

/**
 * First-come-first-served queue of writers waiting for memory. While anyone waits, newcomers queue behind them, so a
 * large value is not starved by a stream of small ones. Served whenever memory is freed; a waiter that is still
 * queued after the wait limit fails with {@link StoreFullException}. Thread-safe (one monitor, no I/O under it).
 */
final class MemoryWaiters {
    private record Waiter(long length, long deadline, CompletableFuture<MemoryValue> future) {
    }

    private final MemoryTier memory;
    private final long waitMillis;
    private final Runnable onWait;
    /** Why waiting is futile now (the disk tier cannot take writes, so nothing will be demoted), or null. */
    private final java.util.function.Supplier<String> futile;
    private final ArrayDeque<Waiter> queue = new ArrayDeque<>();
    private volatile long waitingBytes; // written under the monitor, read without it (on every put)

    /**
     * @param futile says why no waiter can be served now, or null; checked under the monitor as a writer queues, so a
     *               writer that queues while (or just after) {@link #failAll} runs fails too instead of waiting out
     *               the limit
     */
    MemoryWaiters(MemoryTier memory, long waitMillis, Runnable onWait, java.util.function.Supplier<String> futile) {
        this.memory = memory;
        this.waitMillis = waitMillis;
        this.onWait = onWait;
        this.futile = futile;
    }

    MemoryValue tryAllocate(long length) {
        synchronized (this) {
            if (!queue.isEmpty()) {
                return null;
            }
        }
        MemoryValue v = memory.allocate(length);
        if (v == null) {
            onWait.run();
        }
        return v;
    }

    CompletableFuture<MemoryValue> allocate(long length) {
        MemoryValue now = tryAllocate(length);
        if (now != null) {
            return CompletableFuture.completedFuture(now);
        }
        CompletableFuture<MemoryValue> future = new CompletableFuture<>();
        synchronized (this) {
            String why = futile.get();
            if (why != null) { // failAll may have run between the caller's check and this line
                future.completeExceptionally(new StoreFullException(why));
                return future;
            }
            queue.addLast(new Waiter(length, System.currentTimeMillis() + waitMillis, future));
            waitingBytes += MemoryTier.footprintOf(length);
        }
        onWait.run();
        serve(); // memory may have been freed between the failed attempt and queueing
        return future;
    }

    /** Bytes the queued writers need: the demoter keeps at least this much free. */
    long waitingBytes() {
        return waitingBytes;
    }

    /** Hands memory to queued writers in order, as long as it lasts. */
    void serve() {
        while (true) {
            Waiter w;
            MemoryValue v;
            synchronized (this) {
                w = queue.peekFirst();
                if (w == null) {
                    return;
                }
                try {
                    v = memory.allocate(w.length());
                } catch (SlabMapException e) { // fails this writer, not the thread that freed memory
                    queue.pollFirst();
                    waitingBytes -= MemoryTier.footprintOf(w.length());
                    w.future().completeExceptionally(new StoreFullException(e.getMessage()));
                    continue;
                }
                if (v == null) {
                    return;
                }
                queue.pollFirst();
                waitingBytes -= MemoryTier.footprintOf(w.length());
            }
            if (!w.future().complete(v)) {
                v.release(); // cancelled meanwhile
            }
        }
    }

    void expireOverdue() {
        long now = System.currentTimeMillis();
        synchronized (this) {
            for (var it = queue.iterator(); it.hasNext(); ) {
                Waiter w = it.next();
                if (w.deadline() <= now || w.future().isDone()) {
                    it.remove();
                    waitingBytes -= MemoryTier.footprintOf(w.length());
                    w.future().completeExceptionally(new StoreFullException("memory stayed full for " + waitMillis
                            + " ms while waiting for " + w.length() + " bytes; the disk tier may be failing"));
                }
            }
        }
    }

    synchronized void failAll(String why) {
        for (Waiter w : queue) {
            w.future().completeExceptionally(new StoreFullException(why));
        }
        queue.clear();
        waitingBytes = 0;
    }
}
