package io.kvtier.server.command;

import io.kvtier.server.reply.Reply;
import io.kvtier.store.TieredStore;
import io.netty.buffer.Unpooled;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Runs the commands that walk the keyspace (KEYS, SCAN, cluster slot listings) off the event loops, and writes the
 * keys they found back in slices of at most {@link #SLICE_KEYS} keys or {@link #SLICE_BYTES} bytes per event-loop
 * turn. So the event loop never walks the index nor runs the glob matcher, whatever the keyspace size or the pattern;
 * other connections on the same loop are served between slices. Shared by all servers of the JVM: two daemon
 * threads, idle threads end after a minute.
 */
final class KeyspaceWalker {
    static final int SLICE_KEYS = 1024;
    static final int SLICE_BYTES = 256 * 1024;
    private static final ExecutorService WALKERS = walkers();

    private KeyspaceWalker() {
    }

    private static ExecutorService walkers() {
        ThreadPoolExecutor pool = new ThreadPoolExecutor(2, 2, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                r -> {
                    Thread t = new Thread(r, "kvtier-keyspace-walker");
                    t.setDaemon(true);
                    return t;
                });
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }

    /** Runs {@code walk} on a walker thread. */
    static <T> CompletableFuture<T> walk(Supplier<T> walk) {
        return CompletableFuture.supplyAsync(walk, WALKERS);
    }

    /**
     * Counts the live keys of {@code store} that {@code which} accepts on a walker thread, then writes the count as an
     * integer reply (DBSIZE on a cluster node, CLUSTER COUNTKEYSINSLOT).
     */
    static CompletableFuture<Void> countKeys(TieredStore store, Predicate<byte[]> which, Reply r) {
        CompletableFuture<Long> counted = walk(() -> {
            long[] n = {0};
            store.forEachKey(k -> n[0] += which.test(k) ? 1 : 0);
            return n[0];
        });
        return Async.then(counted, r, n -> {
            r.integer(n);
            return null;
        });
    }

    /**
     * Writes {@code keys} as bulk strings (the caller wrote the array header), in slices; on the reply's event loop.
     * Returns null if all fit in one slice, else a future that completes after the last one.
     */
    static CompletableFuture<Void> writeKeys(Reply r, List<byte[]> keys) {
        int next = writeSlice(r, keys, 0);
        if (next == keys.size()) {
            return null;
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        later(r, () -> writeRest(r, keys, next, done));
        return done;
    }

    /**
     * Runs {@code slice} on the reply's event loop after its next round of I/O. Not execute(): a task that re-submits
     * itself runs again in the same task batch, and Netty lets one batch run for up to a second.
     */
    private static void later(Reply r, Runnable slice) {
        r.executor().schedule(slice, 1, TimeUnit.MICROSECONDS);
    }

    private static void writeRest(Reply r, List<byte[]> keys, int from, CompletableFuture<Void> done) {
        try {
            int next = writeSlice(r, keys, from);
            if (next == keys.size()) {
                done.complete(null);
            } else {
                later(r, () -> writeRest(r, keys, next, done));
            }
        } catch (RuntimeException e) {
            done.completeExceptionally(e);
        }
    }

    /**
     * Writes keys from {@code from} until a slice is full; returns the index of the first key not written. The last
     * key of a slice goes through {@link Reply#value(io.netty.buffer.ByteBuf, Runnable)}, which flushes: the socket
     * takes each slice as it comes, rather than one buffer of the whole reply, copied as it grows, at the end.
     */
    private static int writeSlice(Reply r, List<byte[]> keys, int from) {
        int bytes = 0;
        int i = from;
        while (i < keys.size() - 1 && i - from < SLICE_KEYS - 1 && bytes < SLICE_BYTES) {
            byte[] key = keys.get(i++);
            r.bulk(key);
            bytes += key.length;
        }
        if (i < keys.size()) {
            r.value(Unpooled.wrappedBuffer(keys.get(i++)), () -> { });
        }
        return i;
    }
}
