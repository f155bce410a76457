package io.kvtier.server.net;

import io.kvtier.store.TieredStore;
import io.kvtier.store.ValueRef;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Reads disk-resident values on a bounded pool of platform threads, never on an event loop. The bytes of reads in
 * flight (read but not yet written to their sockets) are capped by a semaphore, so many concurrent disk hits cannot
 * grow off-heap memory past {@code bufferBytes} (one value larger than that alone takes the whole allowance).
 */
public final class DiskReads implements AutoCloseable {
    /** A value read from disk: its bytes, and the allowance to give back once they are written. */
    public record Result(ByteBuf payload, Runnable release) {
    }

    private final TieredStore store;
    private final ExecutorService pool;
    private final Semaphore bytes;
    private final int maxPermits;

    public DiskReads(TieredStore store, int threads, long bufferBytes) {
        this.store = store;
        this.maxPermits = (int) Math.min(Integer.MAX_VALUE, bufferBytes);
        this.bytes = new Semaphore(maxPermits, true);
        AtomicInteger n = new AtomicInteger();
        this.pool = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "kvtier-disk-read-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /** Reads {@code ref}'s value; takes over and closes {@code ref}. Fails with the store's exception (corrupt = miss). */
    public CompletableFuture<Result> read(ValueRef ref) {
        return CompletableFuture.supplyAsync(() -> {
            int length = ref.diskRecordLength();
            int permits = Math.min(length, maxPermits);
            bytes.acquireUninterruptibly(permits);
            ByteBuf buf = PooledByteBufAllocator.DEFAULT.directBuffer(length, length);
            try {
                store.readFromDisk(ref, buf.nioBuffer(0, length)); // verified record lands at [0, length)
                buf.setIndex(length - (int) ref.length(), length);     // the value is the record's tail
                return new Result(buf, () -> bytes.release(permits));
            } catch (Exception e) {
                buf.release();
                bytes.release(permits);
                throw new java.util.concurrent.CompletionException(e);
            } finally {
                ref.close();
            }
        }, pool);
    }

    @Override
    public void close() throws InterruptedException {
        pool.shutdown();
        pool.awaitTermination(10, TimeUnit.SECONDS);
    }
}
