package io.kvtier.server.command;

import io.kvtier.server.net.Values;
import io.kvtier.store.PutOptions;
import io.kvtier.store.PutResult;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Publishes the values of a multi-key write (MSET, MSETNX) in argument order: all in one go when every value is ready
 * at once (memory was free, the usual case), else each as soon as it and all before it are ready, so that values
 * beyond free memory are published, and become demotable, before the next ones need their memory. A failure publishes
 * nothing more and gives back every value not published; those already published stay. Thread-safe (one monitor).
 */
final class OrderedPuts {
    private final List<byte[]> keys;
    private final List<CompletableFuture<Values.Prepared>> prepared;
    private final List<CompletableFuture<PutResult>> puts = new ArrayList<>();
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    private int next;
    private boolean failed;

    private OrderedPuts(List<byte[]> keys, List<CompletableFuture<Values.Prepared>> prepared) {
        this.keys = keys;
        this.prepared = prepared;
    }

    /** Stores {@code prepared.get(k)} under {@code keys.get(k)} for every k, in order; completes when all are stored. */
    static CompletableFuture<Void> publish(List<byte[]> keys, List<CompletableFuture<Values.Prepared>> prepared) {
        OrderedPuts puts = new OrderedPuts(keys, prepared);
        puts.drain();
        for (CompletableFuture<Values.Prepared> f : prepared) {
            if (!f.isDone()) {
                f.whenComplete((v, e) -> puts.drain());
            }
        }
        return puts.done;
    }

    private synchronized void drain() {
        while (!failed && next < prepared.size() && prepared.get(next).isDone()) {
            CompletableFuture<Values.Prepared> f = prepared.get(next);
            if (f.isCompletedExceptionally()) {
                fail(f.handle((v, e) -> e).join());
                return;
            }
            puts.add(f.join().put(keys.get(next), PutOptions.PLAIN));
            next++;
        }
        if (!failed && next == prepared.size()) {
            CompletableFuture.allOf(puts.toArray(CompletableFuture[]::new)).whenComplete((v, e) -> {
                if (e != null) {
                    done.completeExceptionally(e);
                } else {
                    done.complete(null);
                }
            });
        }
    }

    private void fail(Throwable e) {
        failed = true;
        for (int k = next + 1; k < prepared.size(); k++) {
            prepared.get(k).thenAccept(Values.Prepared::release);
        }
        done.completeExceptionally(e instanceof CompletionException ? e : new CompletionException(e));
    }
}
