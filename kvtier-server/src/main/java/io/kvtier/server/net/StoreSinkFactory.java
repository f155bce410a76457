package io.kvtier.server.net;

import io.kvtier.resp.BulkSink;
import io.kvtier.resp.BulkSinkFactory;
import io.kvtier.store.StoreFullException;
import io.kvtier.store.TieredStore;
import io.kvtier.store.memory.MemoryValue;
import io.kvtier.store.memory.SlabMapException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Opens sinks in store memory for one connection. When memory is full it starts an asynchronous reservation,
 * reports "not now" to the decoder, and calls {@code resume} (on the connection's event loop) once the reservation
 * is decided. Event-loop confined.
 */
final class StoreSinkFactory implements BulkSinkFactory {
    private final TieredStore store;
    private final Runnable resume;
    private final io.netty.buffer.ByteBufAllocator alloc;
    private CompletableFuture<MemoryValue> pending;
    private DiskSink direct; // the latest disk-bound payload, watched for backlog

    StoreSinkFactory(TieredStore store, io.netty.buffer.ByteBufAllocator alloc, Runnable resume) {
        this.store = store;
        this.alloc = alloc;
        this.resume = resume;
    }

    /** Whether a payload streaming to disk is so far behind that the connection should stop reading. */
    boolean backlogged() {
        return direct != null && direct.backlogged();
    }

    @Override
    public BulkSink open(int argIndex, long length) {
        if (pending != null) {
            if (!pending.isDone()) {
                return null;
            }
            CompletableFuture<MemoryValue> done = pending;
            pending = null;
            try {
                return new MemorySink(done.join());
            } catch (CompletionException e) {
                return new RejectedSink(length, "ERR " + e.getCause().getMessage());
            }
        }
        try {
            if (store.bypassesMemory(length)) {
                direct = new DiskSink(store.openDirectWrite(length), alloc, resume);
                return direct;
            }
            MemoryValue now = store.tryAllocate(length);
            if (now != null) {
                return new MemorySink(now);
            }
            pending = store.allocate(length);
        } catch (StoreFullException | SlabMapException e) {
            return new RejectedSink(length, "ERR " + e.getMessage());
        }
        pending.whenComplete((v, e) -> resume.run());
        return null;
    }

    /** Gives back a reservation the connection no longer needs (it closed while waiting). */
    void close() {
        if (pending != null) {
            if (!pending.cancel(false)) {
                pending.thenAccept(MemoryValue::release);
            }
            pending = null;
        }
    }
}
