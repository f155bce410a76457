package io.kvtier.client.cluster;

import io.kvtier.client.HostPort;
import io.kvtier.client.RespConnection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * A cluster client's connections to one node: a fixed number of slots, each connected on first use and reconnected
 * when its connection has closed (the node died, a timeout closed it). Reconnects after a failed attempt wait
 * {@value #RETRY_MILLIS} ms, so commands for a dead node fail at a bounded rate instead of spinning. Thread-safe
 * (compare-and-set per slot); the connections are owned here and closed by {@link #close}.
 */
final class NodePool implements AutoCloseable {
    static final long RETRY_MILLIS = 100;

    private final HostPort node;
    private final NodeConnector connector;
    private final ScheduledExecutorService timer;
    private final AtomicReferenceArray<CompletableFuture<RespConnection>> slots;
    private final LongAdder reconnects = new LongAdder();
    private volatile long lastFailureNanos = System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(RETRY_MILLIS);
    private volatile boolean closed;

    NodePool(HostPort node, int size, NodeConnector connector, ScheduledExecutorService timer) {
        this.node = node;
        this.connector = connector;
        this.timer = timer;
        this.slots = new AtomicReferenceArray<>(size);
    }

    HostPort node() {
        return node;
    }

    int size() {
        return slots.length();
    }

    long reconnects() {
        return reconnects.sum();
    }

    /** The connection lane {@code lane} uses, connected or on its way; fails when the node cannot be reached. */
    CompletableFuture<RespConnection> connection(int lane) {
        int i = ConnectionShares.connectionFor(lane, slots.length());
        while (true) {
            CompletableFuture<RespConnection> current = slots.get(i);
            if (current != null && usable(current)) {
                return current;
            }
            CompletableFuture<RespConnection> next = new CompletableFuture<>();
            if (slots.compareAndSet(i, current, next)) {
                if (current != null) {
                    reconnects.increment();
                }
                connectLater(next);
                return next;
            }
        }
    }

    private static boolean usable(CompletableFuture<RespConnection> c) {
        return !c.isDone() || !c.isCompletedExceptionally() && c.join().isOpen();
    }

    private void connectLater(CompletableFuture<RespConnection> into) {
        long wait = lastFailureNanos + TimeUnit.MILLISECONDS.toNanos(RETRY_MILLIS) - System.nanoTime();
        if (wait <= 0) {
            connect(into);
            return;
        }
        try {
            timer.schedule(() -> connect(into), wait, TimeUnit.NANOSECONDS);
        } catch (RuntimeException rejected) { // the timer stops when the client closes
            into.completeExceptionally(new IllegalStateException("the cluster client is closed", rejected));
        }
    }

    private void connect(CompletableFuture<RespConnection> into) {
        if (closed) {
            into.completeExceptionally(new IllegalStateException("the cluster client is closed"));
            return;
        }
        connector.connect(node).whenComplete((c, failure) -> {
            if (failure != null) {
                lastFailureNanos = System.nanoTime();
                into.completeExceptionally(failure);
            } else if (!into.complete(c) || closed) {
                c.close();
            }
        });
    }

    /** Closes every connection; commands in flight on them fail. Idempotent. */
    @Override
    public void close() {
        closed = true;
        for (int i = 0; i < slots.length(); i++) {
            CompletableFuture<RespConnection> c = slots.get(i);
            if (c != null) {
                c.thenAccept(RespConnection::close);
            }
        }
    }
}
