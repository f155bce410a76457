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
 * <p>No file I/O runs on the event loop: appends are copied into a pooled buffer of up to {@link #CHUNK} bytes, and
 * each full one, and the partial one at each {@link #flush} (the end of a pass over the input, and a decoded request),
 * is queued for writing on the spool I/O executor, in order (each write after the one before, whichever thread runs
 * it): one system call per chunk or socket read, not per payload, and nothing held in memory between reads. While more
 * than {@link #HIGH_BACKLOG} bytes wait for the file, the connection stops reading, and {@code onDrained} resumes it
 * once half of that is written. Reads wait for the writes queued before them, so the request flushes before its
 * command runs. A failed write is kept and fails every read after it. Appends and flushes come from the connection's
 * event loop; reads and releases from any thread.
 */
final class Spool {
    /** Bytes queued for the file past which the connection stops reading. */
    static final long HIGH_BACKLOG = 8L << 20;
    /** Bytes gathered before a write is queued. */
    static final int CHUNK = 1 << 20;

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
    private ByteBuf chunk;                                   // event loop only: appends not yet queued
    private long chunkAt;                                    // event loop only: where chunk goes in the file

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

    /**
     * Appends {@code n} readable bytes of {@code src}, advancing its reader index; {@code position} must be where the
     * appends so far end (payloads are written in the order they were allotted).
     */
    void write(ByteBuf src, int n, long position) {
        if (chunk != null && chunkAt + chunk.writerIndex() != position) {
            throw new IllegalStateException("spool append at " + position + ", expected "
                    + (chunkAt + chunk.writerIndex()));
        }
        while (n > 0) {
            if (chunk == null) {
                // Sized to what arrived, growing up to a chunk: a connection that trickles holds little.
                chunk = alloc.directBuffer(Math.min(CHUNK, Math.max(n, 64 << 10)), CHUNK);
                chunkAt = position;
            }
            int part = Math.min(n, chunk.maxWritableBytes());
            chunk.writeBytes(src, part);
            n -= part;
            position += part;
            if (chunk.maxWritableBytes() == 0) {
                flush();
            }
        }
    }

    /**
     * Queues the appends gathered so far for writing. Call when the request's last payload has arrived, and whenever
     * the caller stops appending for now (the end of a pass over the input): nothing is held between reads.
     */
    void flush() {
        ByteBuf full = chunk;
        chunk = null;
        if (full == null) { // a chunk exists only once a byte is in it
            return;
        }
        long position = chunkAt;
        int n = full.readableBytes();
        backlog.addAndGet(n);
        tail = tail.handleAsync((v, e) -> {
            try {
                if (failure == null) {
                    writeFully(full, position);
                }
            } catch (IOException | RuntimeException ex) {
                failure = ex;
            } finally {
                full.release();
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

    /**
     * Fills {@code value} from {@code position}, reading straight into its pages (no copy through the heap); call once
     * {@link #written} completed.
     */
    void readInto(long position, MemoryValue value) {
        long done = value.written();
        ByteBuffer window;
        while ((window = value.window(Integer.MAX_VALUE)) != null) {
            int n = window.remaining();
            readFully(window, position + done);
            value.advance(n);
            done += n;
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
