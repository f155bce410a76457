package io.kvtier.server.value;

import io.kvtier.store.memory.MemoryValue;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A file that holds the payloads of one request that did not fit its memory caps, appended in arrival order and read
 * back into store memory when the command runs. Deleted when the last {@link SpoolSink} in it and the request that
 * filled it are done (reference counted).
 *
 * <p>No file I/O runs on the event loop: an append copies the bytes into a pooled buffer and queues their write on the
 * spool I/O executor, in order (each write after the one before, whichever thread runs it); while more than
 * {@link #HIGH_BACKLOG} bytes wait for the file, the connection stops reading, and {@code onDrained} resumes it once
 * half of that is written. Reads wait for the writes queued before them. A failed write is kept and fails every read
 * after it. Appends come from the connection's event loop; reads and releases from any thread.
 */
final class Spool {
    /** Bytes queued for the file past which the connection stops reading. */
    static final long HIGH_BACKLOG = 8L << 20;

    private final Path file;
    private final FileChannel channel;
    private final Executor io;
    private final ByteBufAllocator alloc;
    private final Runnable onDrained;
    private final AtomicInteger refs = new AtomicInteger(1); // the request filling it
    private final AtomicLong backlog = new AtomicLong();
    private volatile CompletableFuture<Void> tail = CompletableFuture.completedFuture(null); // the last write queued
    private volatile Exception failure;                                                   // the first write failure
    private long size;                                       // event loop only

    Spool(Path file, Executor io, ByteBufAllocator alloc, Runnable onDrained) {
        this.file = file;
        this.io = io;
        this.alloc = alloc;
        this.onDrained = onDrained;
        try {
            this.channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                    StandardOpenOption.WRITE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create spool file " + file, e);
        }
    }

    /** Reserves room for a payload of {@code length} bytes at the end; returns where it starts. */
    long allot(long length) {
        refs.incrementAndGet();
        long at = size;
        size += length;
        return at;
    }

    /** Queues {@code n} readable bytes of {@code src} for {@code position}, advancing its reader index. */
    void write(ByteBuf src, int n, long position) {
        ByteBuf copy = alloc.directBuffer(n);
        copy.writeBytes(src, n);
        backlog.addAndGet(n);
        tail = tail.handleAsync((v, e) -> {
            try {
                if (failure == null) {
                    writeFully(copy, position);
                }
            } catch (IOException | RuntimeException ex) {
                failure = ex;
            } finally {
                copy.release();
                long left = backlog.addAndGet(-n);
                if (left < HIGH_BACKLOG / 2 && left + n >= HIGH_BACKLOG / 2) {
                    onDrained.run();
                }
            }
            return null;
        }, io);
    }

    private void writeFully(ByteBuf buf, long position) throws IOException {
        int written = 0;
        int n = buf.readableBytes();
        while (written < n) {
            written += buf.getBytes(buf.readerIndex() + written, channel, position + written, n - written);
        }
    }

    /** Whether the file is so far behind that the connection should stop reading. */
    boolean backlogged() {
        return backlog.get() > HIGH_BACKLOG;
    }

    /** Completes once every write queued so far is done (or failed: {@link #read} and {@link #readInto} say so). */
    CompletableFuture<Void> written() {
        return tail;
    }

    /** The executor that runs this spool's file I/O. */
    Executor io() {
        return io;
    }

    /** Reads {@code length} bytes at {@code position}; waits for the writes queued before. */
    byte[] read(long position, int length) {
        written().join();
        ByteBuffer buf = ByteBuffer.allocate(length);
        readFully(buf, position);
        return buf.array();
    }

    /** Fills {@code value} from {@code position}, 64 KiB at a time; call once {@link #written} completed. */
    void readInto(long position, MemoryValue value) {
        ByteBuffer buf = ByteBuffer.allocate((int) Math.min(64 << 10, value.length()));
        long done = 0;
        while (done < value.length()) {
            buf.clear().limit((int) Math.min(buf.capacity(), value.length() - done));
            readFully(buf, position + done);
            done += buf.flip().remaining();
            value.write(buf);
        }
    }

    private void readFully(ByteBuffer buf, long position) {
        Exception failed = failure;
        if (failed != null) {
            throw new UncheckedIOException("cannot write spool file " + file,
                    failed instanceof IOException io ? io : new IOException(failed));
        }
        try {
            while (buf.hasRemaining()) {
                if (channel.read(buf, position + buf.position()) < 0) {
                    throw new IOException("spool file " + file + " ends before " + (position + buf.limit()));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Drops one reference; the last one closes and deletes the file, on the I/O executor after the queued writes. */
    void release() {
        if (refs.decrementAndGet() == 0) {
            tail.whenCompleteAsync((v, e) -> {
                try {
                    channel.close();
                    Files.deleteIfExists(file);
                } catch (IOException ex) {
                    org.slf4j.LoggerFactory.getLogger(Spool.class).warn("cannot delete spool file {}", file, ex);
                }
            }, io);
        }
    }
}
