package io.kvtier.server.value;

import io.kvtier.resp.BulkSink;
import io.kvtier.resp.RespCommand;
import io.kvtier.server.reply.CommandException;
import io.kvtier.server.reply.Reply;
import io.kvtier.store.KeyTooLongException;
import io.kvtier.store.PutOptions;
import io.kvtier.store.PutResult;
import io.kvtier.store.TieredStore;
import io.kvtier.store.ValueRef;
import io.kvtier.store.disk.CorruptRecordException;
import io.kvtier.store.disk.DirectWrite;
import io.kvtier.store.disk.RecordFormat;
import io.kvtier.store.memory.MemoryValue;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.slf4j.LoggerFactory;

/** Moves values between commands and the store: payload arguments in, memory or disk references out. */
public final class Values {
    private Values() {
    }

    /**
     * The value in argument {@code i} as store memory: the decoder's sink if it streamed there, else a fresh
     * reservation (which may wait for the demoter) filled from the heap argument.
     */
    private static CompletableFuture<MemoryValue> take(RespCommand cmd, int i, TieredStore store) {
        if (cmd.isSink(i)) {
            BulkSink sink = cmd.takeSink(i);
            if (sink instanceof RejectedSink rejected) {
                throw new CommandException(rejected.error);
            }
            if (sink instanceof SpoolSink spooled) {
                return spooled.toMemory(store);
            }
            return CompletableFuture.completedFuture(((MemorySink) sink).take());
        }
        return fill(cmd.bytes(i), store);
    }

    /** {@code bytes} in store memory reserved for them (which may wait for the demoter). */
    private static CompletableFuture<MemoryValue> fill(byte[] bytes, TieredStore store) {
        MemoryValue now = store.tryAllocate(bytes.length);
        if (now != null) {
            now.write(bytes);
            return CompletableFuture.completedFuture(now);
        }
        return store.allocate(bytes.length).thenApply(v -> {
            v.write(bytes);
            return v;
        });
    }

    /**
     * Argument {@code i} as a buffer to send to a peer (a forwarded command): heap arguments wrapped, payloads in
     * store memory copied out and their memory given back. A payload that went straight to disk (over half of
     * --memory) is refused: a proxy does not stage it twice.
     */
    public static ByteBuf toByteBuf(RespCommand cmd, int i) {
        BulkSink sink = cmd.sink(i);
        if (sink == null) {
            return Unpooled.wrappedBuffer(cmd.bytes(i));
        }
        if (sink instanceof RejectedSink rejected) {
            throw new CommandException(rejected.error);
        }
        if (sink instanceof SpoolSink spooled) {
            cmd.takeSink(i);
            try {
                return Unpooled.wrappedBuffer(spooled.toBytes());
            } finally {
                spooled.abort();
            }
        }
        if (!(sink instanceof MemorySink)) {
            throw new CommandException("ERR a value of " + sink.length() + " bytes (over half of --memory) cannot be "
                    + "forwarded; send it to the slot's primary (CLUSTER SLOTS) or use a cluster client");
        }
        cmd.takeSink(i);
        MemoryValue value = ((MemorySink) sink).take();
        try {
            ByteBuf out = io.netty.buffer.PooledByteBufAllocator.DEFAULT.directBuffer((int) value.length());
            for (java.nio.ByteBuffer part : value.buffers()) {
                out.writeBytes(part);
            }
            return out;
        } finally {
            value.release();
        }
    }

    /** Refuses a key the disk format cannot hold, before anything is stored. */
    public static void checkKey(byte[] key) {
        if (key.length > RecordFormat.MAX_KEY_LENGTH) {
            throw new KeyTooLongException(key.length);
        }
    }

    /** A value argument made ready to store: memory reserved and filled, or a large payload fully on disk. */
    public sealed interface Prepared {
        /** Stores it under {@code key}; the store takes it over. */
        CompletableFuture<PutResult> put(byte[] key, PutOptions options);

        /** Gives it back unstored. */
        void release();
    }

    private record PreparedMemory(TieredStore store, MemoryValue value) implements Prepared {
        public CompletableFuture<PutResult> put(byte[] key, PutOptions options) {
            return store.put(key, value, options);
        }

        public void release() {
            value.release();
        }
    }

    private record PreparedDisk(TieredStore store, DirectWrite write) implements Prepared {
        public CompletableFuture<PutResult> put(byte[] key, PutOptions options) {
            return store.putDirect(key, write, options);
        }

        public void release() {
            write.abort();
        }
    }

    /**
     * A value argument taken from its command (which may be released meanwhile) whose memory is reserved only when
     * {@link #start} runs, so that a multi-key write can pace its reservations instead of queueing all at once.
     */
    public sealed interface Deferred {
        /** Reserves and fills the value's memory (unless it already holds its memory or file). Call at most once. */
        CompletableFuture<Prepared> start();

        /** Gives the value back without starting it. */
        void discard();
    }

    private record DeferredHeap(byte[] bytes, TieredStore store) implements Deferred {
        public CompletableFuture<Prepared> start() {
            return fill(bytes, store).thenApply(v -> new PreparedMemory(store, v));
        }

        public void discard() {
        }
    }

    private record DeferredSpool(SpoolSink sink, TieredStore store) implements Deferred {
        public CompletableFuture<Prepared> start() {
            return sink.toMemory(store).thenApply(v -> new PreparedMemory(store, v));
        }

        public void discard() {
            sink.abort();
        }
    }

    private record Ready(CompletableFuture<Prepared> prepared) implements Deferred {
        public CompletableFuture<Prepared> start() {
            return prepared;
        }

        public void discard() {
            prepared.thenAccept(Prepared::release);
        }
    }

    /** Takes argument {@code i} for {@link Deferred#start later} preparation (see {@link #prepare}). */
    public static Deferred defer(RespCommand cmd, int i, TieredStore store) {
        if (cmd.sink(i) == null) {
            return new DeferredHeap(cmd.bytes(i), store);
        }
        if (cmd.sink(i) instanceof SpoolSink spooled) {
            cmd.takeSink(i);
            return new DeferredSpool(spooled, store);
        }
        return new Ready(prepare(cmd, i, store));
    }

    /** Makes argument {@code i} ready to store (see {@link Prepared}) without publishing it. */
    public static CompletableFuture<Prepared> prepare(RespCommand cmd, int i, TieredStore store) {
        if (cmd.sink(i) instanceof DiskSink disk) {
            cmd.takeSink(i);
            DirectWrite write = disk.take();
            return write.finish().handle((v, e) -> {
                if (e != null) {
                    write.abort();
                    throw e instanceof CompletionException ce ? ce : new CompletionException(e);
                }
                return new PreparedDisk(store, write);
            });
        }
        return take(cmd, i, store).thenApply(value -> new PreparedMemory(store, value));
    }

    /** Fails with the store's error if the payload of argument {@code i} was refused while it arrived. */
    public static void checkAccepted(RespCommand cmd, int i) {
        if (cmd.sink(i) instanceof RejectedSink rejected) {
            throw new CommandException(rejected.error);
        }
    }

    /**
     * Stores argument {@code i} of {@code cmd} under {@code key}: from store memory, or, for a payload that streamed
     * straight to disk, by committing that file.
     */
    public static CompletableFuture<PutResult> put(RespCommand cmd, int i, byte[] key, PutOptions options,
                                                   TieredStore store) {
        return prepare(cmd, i, store).thenCompose(value -> value.put(key, options));
    }

    /**
     * Writes {@code ref} as a bulk string (taking it over): at once from memory, or after a disk read, whose failure
     * as a corrupt record is answered as a miss. Returns null when done synchronously.
     */
    public static CompletableFuture<Void> write(DiskReads diskReads, ValueRef ref, Reply reply) {
        if (ref == null) {
            reply.nil();
            return null;
        }
        if (ref.inMemory()) {
            reply.value(ref);
            return null;
        }
        if (DiskReads.streams(ref)) {
            if (reply.holding()) { // a replicated write's reply waits for its backups: it cannot stream meanwhile
                ref.close();
                throw new CommandException("ERR a value over " + (DiskReads.STREAM_THRESHOLD >> 20) + " MiB on disk "
                        + "cannot be returned by a replicated write (GETDEL, SET ... GET); GET it first");
            }
            return diskReads.stream(ref, reply);
        }
        return diskReads.read(ref).handleAsync((read, e) -> {
            writeRead(read, e, reply);
            return null;
        }, reply.executor());
    }

    /** Writes the outcome of a disk read: the value, or nil if it was corrupt; rethrows other failures. */
    static void writeRead(DiskReads.Result read, Throwable e, Reply reply) {
        if (e == null) {
            reply.value(read.payload(), read.release());
            return;
        }
        Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        if (cause instanceof CorruptRecordException) {
            reply.nil();
        } else {
            throw e instanceof CompletionException ce ? ce : new CompletionException(cause);
        }
    }

    /**
     * Like {@link #write} but never fails: a value whose disk read fails for any reason is answered as nil (and
     * logged), for replies that must stay well-formed around it (elements of MGET's array).
     */
    public static CompletableFuture<Void> writeOrNil(DiskReads diskReads, ValueRef ref, Reply reply) {
        CompletableFuture<Void> f = write(diskReads, ref, reply);
        if (f == null) {
            return null;
        }
        return f.handleAsync((v, e) -> {
            if (e != null) {
                LoggerFactory.getLogger(Values.class).error("disk read failed; answering nil: {}", e.toString());
                reply.nil(); // after a half-streamed value the connection is already closed and this is discarded
            }
            return null;
        }, reply.executor());
    }

    /** Copies bytes [start, start+length) of {@code ref}'s value (memory or disk) to the heap. */
    public static CompletableFuture<byte[]> range(DiskReads diskReads, ValueRef ref, long start, int length) {
        if (ref.inMemory()) {
            try (ref) {
                byte[] out = new byte[length];
                Unpooled.wrappedBuffer(ref.memory().buffers()).getBytes((int) start, out);
                return CompletableFuture.completedFuture(out);
            }
        }
        return diskReads.read(ref).thenApply(r -> {
            try {
                byte[] out = new byte[length];
                ByteBuf p = r.payload();
                p.getBytes(p.readerIndex() + (int) start, out);
                return out;
            } finally {
                r.payload().release();
                r.release().run();
            }
        });
    }
}
