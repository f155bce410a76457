package io.kvtier.server.value;

import io.kvtier.server.reply.Reply;
import io.kvtier.store.StoreFullException;
import io.kvtier.store.TieredStore;
import io.kvtier.store.ValueRef;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
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
            int length = ref.diskReadLength();
            int permits = Math.min(length, maxPermits);
            if (!acquire(permits)) {
                ref.close();
                throw new java.util.concurrent.CompletionException(new StoreFullException("disk reads of "
                        + maxPermits + " bytes have been waiting on slow clients for " + PERMIT_WAIT_SECONDS
                        + " s; try again"));
            }
            ByteBuf buf;
            try {
                buf = PooledByteBufAllocator.DEFAULT.directBuffer(length, length);
            } catch (RuntimeException | OutOfMemoryError e) {
                bytes.release(permits);
                ref.close();
                throw new java.util.concurrent.CompletionException(e);
            }
            try {
                ByteBuffer whole = buf.nioBuffer(0, length);
                ByteBuffer value = store.readFromDisk(ref, whole); // the verified value, somewhere in whole
                int at = Math.toIntExact(MemorySegment.ofBuffer(value).address() - MemorySegment.ofBuffer(whole).address());
                buf.setIndex(at, at + value.remaining());
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

    /**
     * Reads {@code ref}'s value (as {@link #read}) into a buffer of its own, giving the staging allowance back at once:
     * for a holder that keeps the bytes long, such as a replication call waiting for its backups.
     */
    public CompletableFuture<ByteBuf> readCopy(ValueRef ref) {
        return read(ref).thenApply(read -> {
            ByteBuf payload = read.payload();
            ByteBuf copy = PooledByteBufAllocator.DEFAULT.directBuffer(payload.readableBytes());
            copy.writeBytes(payload, payload.readerIndex(), payload.readableBytes());
            payload.release();
            read.release().run();
            return copy;
        });
    }

    private static final long PERMIT_WAIT_SECONDS = 30;

    /** Waits a bounded time for staging room: clients that stop reading hold it, and must not block reads forever. */
    private boolean acquire(int permits) {
        try {
            return bytes.tryAcquire(permits, PERMIT_WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Values above this are streamed in chunks (verify pass, then send pass) instead of read whole. */
    static final long STREAM_THRESHOLD = 64L << 20;
    private static final int STREAM_CHUNK = 4 << 20;

    static boolean streams(ValueRef ref) {
        return ref.length() > STREAM_THRESHOLD;
    }

    /**
     * Sends a value too large to stage whole: first verifies its checksum in chunks, then writes it in chunks with
     * one in flight, so off-heap use stays at one chunk however large the value. A corrupt record is a miss. Takes
     * over {@code ref}; completes when the last byte is written.
     */
    CompletableFuture<Void> stream(ValueRef ref, Reply reply) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        CompletableFuture.runAsync(() -> {
            ByteBuf scratch = PooledByteBufAllocator.DEFAULT.directBuffer(STREAM_CHUNK, STREAM_CHUNK);
            try {
                store.verifyOnDisk(ref, scratch.nioBuffer(0, STREAM_CHUNK));
            } catch (java.io.IOException e) {
                throw new java.util.concurrent.CompletionException(e);
            } finally {
                scratch.release();
            }
        }, pool).whenCompleteAsync((v, e) -> {
            if (e != null) {
                ref.close();
                try {
                    Values.writeRead(null, e, reply);
                    done.complete(null);
                } catch (RuntimeException other) {
                    done.completeExceptionally(other);
                }
                return;
            }
            reply.bulkHeaderNow(ref.length());
            sendChunk(ref, 0, reply, done);
        }, reply.executor());
        return done;
    }

    private void sendChunk(ValueRef ref, long offset, Reply reply, CompletableFuture<Void> done) {
        int n = (int) Math.min(STREAM_CHUNK, ref.length() - offset);
        CompletableFuture.supplyAsync(() -> {
            ByteBuf buf = PooledByteBufAllocator.DEFAULT.directBuffer(n, n);
            try {
                store.readDiskValue(ref, offset, buf.nioBuffer(0, n));
                return buf.writerIndex(n);
            } catch (Exception e) {
                buf.release();
                throw new java.util.concurrent.CompletionException(e);
            }
        }, pool).whenCompleteAsync((buf, e) -> {
            if (e != null) {
                ref.close();
                reply.abortConnection(); // half a value is on the wire: only closing keeps the client from trusting it
                done.completeExceptionally(e);
                return;
            }
            reply.writeNow(buf).addListener(f -> {
                if (!f.isSuccess()) {
                    ref.close();
                    done.completeExceptionally(f.cause());
                } else if (offset + n < ref.length()) {
                    sendChunk(ref, offset + n, reply, done);
                } else {
                    ref.close();
                    reply.crlfNow();
                    done.complete(null);
                }
            });
        }, reply.executor());
    }

    @Override
    public void close() throws InterruptedException {
        pool.shutdown();
        pool.awaitTermination(10, TimeUnit.SECONDS);
    }
}
