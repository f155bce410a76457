package io.kvtier.server.value;

import io.kvtier.resp.BulkSink;
import io.kvtier.store.TieredStore;
import io.kvtier.store.memory.MemoryValue;
import io.netty.buffer.ByteBuf;
import java.util.concurrent.CompletableFuture;

/**
 * A payload below {@link RequestMemory#SPOOL_MAX} that arrived while its request was over the memory reservation caps:
 * kept in the request's {@link Spool} until its command runs, then read into memory reserved then ({@link #toMemory}).
 * Owns one reference on the spool and its share of the spool cap until taken over or aborted.
 */
final class SpoolSink implements BulkSink {
    private final Spool spool;
    private final RequestMemory memory;
    private final long position;
    private final long length;
    private long written;
    private boolean released;

    SpoolSink(Spool spool, RequestMemory memory, long length) {
        this.spool = spool;
        this.memory = memory;
        this.length = length;
        this.position = spool.allot(length);
    }

    @Override
    public long length() {
        return length;
    }

    @Override
    public void write(ByteBuf src, int n) {
        spool.write(src, n, position + written);
        written += n;
    }

    @Override
    public byte[] toBytes() {
        return spool.read(position, (int) length);
    }

    /**
     * Reserves memory for the payload (waiting for the demoter if need be) and fills it from the spool, on the spool's
     * I/O executor once the payload's writes are done: never on the event loop, nor on the thread that freed memory.
     */
    CompletableFuture<MemoryValue> toMemory(TieredStore store) {
        CompletableFuture<MemoryValue> reserved;
        try {
            MemoryValue now = store.tryAllocate(length);
            reserved = now != null ? CompletableFuture.completedFuture(now) : store.allocate(length);
        } catch (RuntimeException e) {
            abort();
            throw e;
        }
        return reserved.thenCombine(spool.written(), (value, written) -> value).handleAsync((value, e) -> {
            try {
                if (e != null) {
                    reserved.thenAccept(MemoryValue::release); // reserved, but the spool's writes could not run
                    throw e instanceof RuntimeException re ? re : new java.util.concurrent.CompletionException(e);
                }
                try {
                    spool.readInto(position, value);
                } catch (RuntimeException readFailure) {
                    value.release();
                    throw readFailure;
                }
                return value;
            } finally {
                abort();
            }
        }, spool.io());
    }

    @Override
    public synchronized void abort() {
        if (!released) {
            released = true;
            memory.unspool(length);
            spool.release();
        }
    }
}
