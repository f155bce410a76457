package io.kvtier.server.command;

import io.kvtier.server.value.Values;
import io.kvtier.store.PutOptions;
import io.kvtier.store.PutResult;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Stores the values of a multi-key write (MSET, MSETNX) in argument order. Values are prepared (memory reserved and
 * filled) in order, with at most {@link #WINDOW_BYTES} of reservations waiting for memory at a time, so that other
 * clients' writes queue behind a window of this command, not behind all of it. A value is published once it and all
 * before it are ready: when every value is ready at once (memory was free, the usual case) all are published in one
 * go; when some must wait, those before are published first and become demotable, so a write larger than free memory
 * completes. A failure publishes nothing more and gives back every value not published; those already published stay.
 * Confined to the connection's event loop: completions are handed to it, never run inline, because a put that frees
 * memory completes other reservations on the putting thread, and publishing from there would re-enter mid-put.
 */
final class OrderedPuts {
    /** Most bytes of this command's reservations that wait for memory at once. */
    static final long WINDOW_BYTES = 8L << 20;

    private final List<byte[]> keys;
    private final List<Values.Deferred> values;
    private final long[] lengths;
    private final List<CompletableFuture<Values.Prepared>> prepared = new ArrayList<>();
    private final List<CompletableFuture<PutResult>> puts = new ArrayList<>();
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    private final java.util.concurrent.Executor loop;
    private final PutOptions options;
    private long waitingBytes;
    private int published;
    private boolean failed;
    private boolean finishing;

    private OrderedPuts(List<byte[]> keys, List<Values.Deferred> values, long[] lengths, PutOptions options,
                        java.util.concurrent.Executor loop) {
        this.options = options;
        this.loop = loop;
        this.keys = keys;
        this.values = values;
        this.lengths = lengths;
    }

    /**
     * Stores {@code values.get(k)} ({@code lengths[k]} bytes) under {@code keys.get(k)} for every k, in order, each with
     * cluster version {@code version} (0 outside a cluster). Call on the connection's event loop {@code loop}.
     */
    static CompletableFuture<Void> publish(List<byte[]> keys, List<Values.Deferred> values, long[] lengths,
                                           long version, java.util.concurrent.Executor loop) {
        OrderedPuts puts = new OrderedPuts(keys, values, lengths, PutOptions.PLAIN.withVersion(version), loop);
        puts.pump();
        return puts.done;
    }

    private void pump() {
        startMore();
        while (!failed && published < prepared.size() && prepared.get(published).isDone()) {
            CompletableFuture<Values.Prepared> f = prepared.get(published);
            if (f.isCompletedExceptionally()) {
                fail(f.handle((v, e) -> e).join());
                return;
            }
            int k = published++;
            puts.add(f.join().put(keys.get(k), options));
            startMore();
        }
        if (!failed && published == values.size() && !finishing) {
            finishing = true;
            CompletableFuture.allOf(puts.toArray(CompletableFuture[]::new)).whenComplete((v, e) -> {
                if (e != null) {
                    done.completeExceptionally(e);
                } else {
                    done.complete(null);
                }
            });
        }
    }

    /** Starts preparing the next values while the reservations waiting stay within the window. */
    private void startMore() {
        while (!failed && prepared.size() < values.size() && (waitingBytes < WINDOW_BYTES
                || prepared.size() == published)) {
            int k = prepared.size();
            CompletableFuture<Values.Prepared> f;
            try {
                f = values.get(k).start();
            } catch (RuntimeException e) {
                f = CompletableFuture.failedFuture(e);
            }
            prepared.add(f);
            if (!f.isDone()) {
                waitingBytes += lengths[k];
                f.whenCompleteAsync((v, e) -> settled(k), loop);
            }
        }
    }

    private void settled(int k) {
        waitingBytes -= lengths[k];
        pump();
    }

    private void fail(Throwable e) {
        failed = true;
        for (int k = published + 1; k < values.size(); k++) {
            if (k < prepared.size()) {
                prepared.get(k).thenAccept(Values.Prepared::release);
            } else {
                values.get(k).discard();
            }
        }
        done.completeExceptionally(e instanceof CompletionException ? e : new CompletionException(e));
    }
}
