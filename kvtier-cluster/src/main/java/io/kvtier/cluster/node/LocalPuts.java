package io.kvtier.cluster.node;

import io.kvtier.store.PutOptions;
import io.kvtier.store.PutResult;
import io.kvtier.store.TieredStore;
import io.kvtier.store.disk.DirectWrite;
import io.kvtier.store.memory.MemoryValue;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/** Stores a value that arrived from a peer (a buffer) in this node's store: memory if it fits, else straight to disk. */
final class LocalPuts {
    private LocalPuts() {
    }

    /** Stores {@code value} under {@code key}; takes over {@code value} (released when stored or failed). */
    static CompletableFuture<PutResult> put(TieredStore store, byte[] key, ByteBuf value, PutOptions options) {
        long length = value.readableBytes();
        try {
            if (store.bypassesMemory(length)) {
                DirectWrite write = store.openDirectWrite(length);
                ByteBuffer[] parts = value.nioBuffers();
                AtomicInteger pending = new AtomicInteger(parts.length);
                for (ByteBuffer part : parts) {
                    write.append(part, () -> {
                        if (pending.decrementAndGet() == 0) {
                            value.release();
                        }
                    });
                }
                if (parts.length == 0) {
                    value.release();
                }
                return store.putDirect(key, write, options);
            }
            MemoryValue now = store.tryAllocate(length);
            CompletableFuture<MemoryValue> memory = now != null ? CompletableFuture.completedFuture(now)
                    : store.allocate(length);
            return memory.thenCompose(v -> {
                try {
                    for (ByteBuffer part : value.nioBuffers()) {
                        v.write(part);
                    }
                } finally {
                    value.release();
                }
                return store.put(key, v, options);
            }).whenComplete((r, e) -> {
                if (e != null && value.refCnt() > 0) {
                    value.release();
                }
            });
        } catch (RuntimeException e) {
            if (value.refCnt() > 0) {
                value.release();
            }
            return CompletableFuture.failedFuture(e);
        }
    }
}
