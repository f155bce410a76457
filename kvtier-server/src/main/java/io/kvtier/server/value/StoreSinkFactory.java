package io.kvtier.server.value;

import io.kvtier.resp.BulkSink;
import io.kvtier.resp.BulkSinkFactory;
import io.kvtier.store.StoreFullException;
import io.kvtier.store.TieredStore;
import io.kvtier.store.memory.MemoryTier;
import io.kvtier.store.memory.MemoryValue;
import io.kvtier.store.memory.SlabMapException;
import io.netty.buffer.ByteBufAllocator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Opens sinks for one connection's payloads: in store memory while the request's reservations stay within the caps of
 * {@link RequestMemory}, else on disk (the disk tier or the request's spool file). When memory is full it starts an
 * asynchronous reservation, reports "not now" to the decoder, and calls {@code resume} (on the connection's event
 * loop) once the reservation is decided. Event-loop confined.
 */
public final class StoreSinkFactory implements BulkSinkFactory {
    private final TieredStore store;
    private final RequestMemory limits;
    private final Runnable resume;
    private final ByteBufAllocator alloc;
    private CompletableFuture<MemoryValue> pending;
    private DiskSink direct; // the latest disk-bound payload, watched for backlog
    private Spool spool;     // of the request in progress, once one of its payloads spilled
    private long reserved;   // memory reserved for the request in progress, counted in limits

    public StoreSinkFactory(TieredStore store, RequestMemory limits, ByteBufAllocator alloc, Runnable resume) {
        this.store = store;
        this.limits = limits;
        this.alloc = alloc;
        this.resume = resume;
    }

    /** Whether a payload streaming to disk, or the spool, is so far behind that the connection should stop reading. */
    public boolean backlogged() {
        return direct != null && direct.backlogged() || spool != null && spool.backlogged();
    }

    /** Memory reserved now for the request in progress. */
    long reservedBytes() {
        return reserved;
    }

    @Override
    public BulkSink open(int argIndex, long length) {
        if (pending != null) {
            return takePending(length);
        }
        try {
            if (store.bypassesMemory(length)) {
                return toDisk(length);
            }
            long charge = MemoryTier.chargeOf(length); // what the reservation holds: a 16 KiB value takes 16 KiB
            if (reserved + charge > limits.connectionReservationCap() || !limits.tryReserve(charge)) {
                return spill(length);
            }
            reserved += charge;
            MemoryValue now = store.tryAllocate(length);
            if (now != null) {
                return new MemorySink(now);
            }
            pending = store.allocate(length);
        } catch (StoreFullException | SlabMapException e) {
            return new RejectedSink(length, "ERR " + e.getMessage());
        } catch (java.io.UncheckedIOException e) { // a spool or direct-write file that cannot be created
            return new RejectedSink(length, "ERR cannot store a payload of " + length + " bytes on disk: "
                    + e.getMessage());
        }
        pending.whenComplete((v, e) -> resume.run());
        return null;
    }

    private BulkSink takePending(long length) {
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

    private DiskSink toDisk(long length) {
        direct = new DiskSink(store.openDirectWrite(length), alloc, resume);
        return direct;
    }

    /** A payload over the reservation caps: large ones to the disk tier, small ones to the request's spool file. */
    private BulkSink spill(long length) {
        if (length >= RequestMemory.SPOOL_MAX) {
            return toDisk(length);
        }
        if (!limits.trySpool(length)) {
            return new RejectedSink(length, "ERR spool files of requests in progress would exceed "
                    + limits.spoolCap() + " bytes (a quarter of --disk); retry later");
        }
        if (spool == null) {
            spool = new Spool(limits.newSpoolFile(), limits.spoolIo(), alloc, resume);
        }
        return new SpoolSink(spool, limits, length);
    }

    /**
     * Queues the spool's gathered appends for writing: when a request was decoded (in a transaction too), so that its
     * command, now or at EXEC, can read them back; and at the end of each pass over the input, so that no payload
     * bytes wait in memory between socket reads (a connection that trickles a request holds none).
     */
    public void flushSpool() {
        if (spool != null) {
            spool.flush();
        }
    }

    /**
     * The request in progress was decoded (its sinks now belong to the command): its reservations no longer count as
     * unfinished, and its spool, its last appends queued for writing, is left to the sinks that use it.
     */
    public void requestDone() {
        limits.unreserve(reserved);
        reserved = 0;
        if (spool != null) {
            spool.flush();
            spool.release();
            spool = null;
        }
    }

    /** Gives back a reservation the connection no longer needs (it closed while waiting) and the request's counts. */
    public void close() {
        if (pending != null) {
            if (!pending.cancel(false)) {
                pending.thenAccept(MemoryValue::release);
            }
            pending = null;
        }
        requestDone();
    }
}
