package io.kvtier.server.reply;

import io.kvtier.resp.RespWriter;
import io.kvtier.store.ValueRef;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.concurrent.EventExecutor;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.LongAdder;

/**
 * Builds the replies of one connection in RESP2 or RESP3. Small replies accumulate in one buffer; a memory-resident
 * value is written as a view of its off-heap pages (no copy), and its reference is released when the socket write
 * completes. Event-loop confined: asynchronous commands must come back to {@link #executor()} before replying.
 * <p>
 * A {@link #capturing capturing} reply has no connection: what it would send is collected in a heap buffer instead,
 * so that a script's {@code redis.call} can run a real command and read its reply back as a value.
 */
public final class Reply {
    private final ChannelHandlerContext ctx;
    /** Where error replies are counted (INFO errorstats); null for a capturing reply. */
    private final ErrorStats errors;
    /** Where bytes written to the socket are counted (INFO total_net_output_bytes); null for a capturing reply. */
    private final LongAdder outputBytes;
    /** The executor of a capturing reply (its {@code ctx} is null). */
    private final EventExecutor captureExecutor;
    /** What a capturing reply collected; null on a connection's reply. */
    private ByteBuf captured;
    /** The most bytes a capturing reply collects: past it, the reply is dropped and {@link #overflowed} is set. */
    private final long captureLimit;
    private boolean overflowed;
    /** A capturing reply lost a streamed value half-way (a disk read failed). */
    private boolean aborted;
    private ByteBuf buf;
    /** Error replies written so far: the dispatcher compares it around a command to know whether it failed. */
    private long errorReplies;
    /** Of {@link #errorReplies}, those a completed command has counted as its own (see {@link #newErrorsSince}). */
    private long errorsCounted;
    private int protocol = 2;
    private boolean dirty;
    /** Non-null while replies are held back (see {@link #hold()}): what would have been written, in order. */
    private java.util.List<Held> held;

    private record Held(ByteBuf bytes, Runnable done) {
    }

    /** Counts its error replies in {@code errors} and the bytes it writes in {@code outputBytes} (INFO). */
    public Reply(ChannelHandlerContext ctx, ErrorStats errors, LongAdder outputBytes) {
        this.ctx = ctx;
        this.errors = errors;
        this.outputBytes = outputBytes;
        this.captureExecutor = null;
        this.captureLimit = 0;
    }

    private Reply(EventExecutor executor, long limit) {
        this.ctx = null;
        this.errors = null;
        this.outputBytes = null;
        this.captureExecutor = executor;
        this.captureLimit = limit;
        this.captured = Unpooled.buffer(256);
    }

    /**
     * A reply that collects at most {@code limit} bytes in RESP2 instead of sending them; it is confined to
     * {@code executor}, which asynchronous commands come back to, as they come back to a connection's event loop.
     */
    public static Reply capturing(EventExecutor executor, long limit) {
        return new Reply(executor, limit);
    }

    /**
     * The bytes a capturing reply collected, handed over to the caller (who releases them); null when they went over
     * the limit ({@link #overflowed}) or a streamed value could not be completed (a disk read failed half-way).
     */
    public ByteBuf takeCaptured() {
        writeBuffered();
        ByteBuf out = captured;
        captured = null;
        if (overflowed || aborted) {
            out.release();
            return null;
        }
        return out;
    }

    /** Whether a capturing reply went over its limit. */
    public boolean overflowed() {
        return overflowed;
    }

    public EventExecutor executor() {
        return ctx != null ? ctx.executor() : captureExecutor;
    }

    public int protocol() {
        return protocol;
    }

    public void protocol(int version) {
        this.protocol = version;
    }

    /** The buffer to append small replies to (via {@link RespWriter}). */
    public ByteBuf buf() {
        if (buf == null) {
            buf = ctx != null ? ctx.alloc().ioBuffer(256) : Unpooled.buffer(256);
        }
        dirty = true;
        return buf;
    }

    public void ok() {
        simple("OK");
    }

    public void simple(String s) {
        RespWriter.simpleString(buf(), s);
    }

    /** An error reply; {@code message} starts with its code, e.g. "ERR syntax error". */
    public void error(String message) {
        errorReplies++;
        if (errors != null) { // a capturing reply's error goes back to the script, which answers its own
            errors.record(message);
        }
        RespWriter.error(buf(), message.replace('\r', ' ').replace('\n', ' '));
    }

    /**
     * Counts an error reply written as raw bytes (a script's result that is an error table): INFO errorstats and the
     * command's failure see it as if {@link #error} had written it.
     */
    public void countError(String message) {
        errorReplies++;
        if (errors != null) {
            errors.record(message);
        }
    }

    /** How many error replies this connection has been sent (see {@link #error}). */
    public long errorReplies() {
        return errorReplies;
    }

    /**
     * Whether an error reply was written after the first {@code since} that no command completed in between has
     * counted: a command run inside another (one queued in MULTI, run by EXEC) counts its own errors, and the outer one
     * fails only on errors after it, as Redis counts failed_calls. Marks every error written so far counted.
     */
    public boolean newErrorsSince(long since) {
        boolean failed = errorReplies > Math.max(since, errorsCounted);
        errorsCounted = errorReplies;
        return failed;
    }

    public void integer(long n) {
        RespWriter.integer(buf(), n);
    }

    public void bulk(byte[] bytes) {
        RespWriter.bulk(buf(), bytes);
    }

    public void bulk(String s) {
        bulk(s.getBytes(StandardCharsets.UTF_8));
    }

    public void nil() {
        RespWriter.nullBulk(buf(), protocol);
    }

    public void nullArray() {
        RespWriter.nullArray(buf(), protocol);
    }

    public void array(int n) {
        RespWriter.arrayHeader(buf(), n);
    }

    public void map(int n) {
        RespWriter.mapHeader(buf(), n, protocol);
    }

    public void set(int n) {
        RespWriter.setHeader(buf(), n, protocol);
    }

    public void verbatim(String text) {
        RespWriter.verbatim(buf(), text, protocol);
    }

    /** Values up to this size are copied into the reply buffer: cheaper than a page view and a write listener. */
    private static final int COPY_BELOW = 16 * 1024;

    /**
     * Writes a memory-resident value, a large one without copying it (a view of its pages, written by the socket
     * directly); takes over {@code ref} and closes it once the bytes are copied or written.
     */
    public void value(ValueRef ref) {
        RespWriter.bulkHeader(buf(), ref.length());
        if (ref.length() <= COPY_BELOW) {
            try (ref) {
                ByteBuf out = buf();
                long from = ref.memory().smallAddress();
                int length = (int) ref.length();
                out.ensureWritable(length);
                if (from != 0 && out.hasMemoryAddress()) {
                    // Memory to memory: a ByteBuffer view of the chunk per GET was a quarter of a GET's allocation.
                    io.netty.util.internal.PlatformDependent.copyMemory(from, out.memoryAddress() + out.writerIndex(),
                            length);
                    out.writerIndex(out.writerIndex() + length);
                } else {
                    for (java.nio.ByteBuffer part : ref.memory().buffers()) {
                        out.writeBytes(part);
                    }
                }
            }
        } else {
            writeBuffered();
            ByteBuf pages = Unpooled.wrappedBuffer(ref.memory().buffers());
            emit(pages, ref::close);
        }
        RespWriter.crlf(buf());
    }

    /**
     * Writes a value read from disk; takes over {@code payload} (released after the write) and then runs {@code done}.
     * Flushed at once: the payload holds disk-read staging until the socket takes it, and a command that reads more
     * values (MGET) must not wait for staging its own unflushed replies hold.
     */
    public void value(ByteBuf payload, Runnable done) {
        RespWriter.bulkHeader(buf(), payload.readableBytes());
        writeBuffered();
        emit(payload, done);
        if (held == null && ctx != null) {
            ctx.flush();
        }
        RespWriter.crlf(buf());
    }

    /**
     * Holds back every reply written from now on until {@link #releaseHeld()} or {@link #dropHeld()}: a cluster
     * primary answers a write only once its backups have it. Replies written before are unaffected.
     */
    public void hold() {
        writeBuffered();
        held = new java.util.ArrayList<>();
    }

    /** Whether replies are being held (streaming a value then cannot wait for the socket). */
    public boolean holding() {
        return held != null;
    }

    /** Writes what was held, in order; the next flush sends it. */
    public void releaseHeld() {
        writeBuffered();
        java.util.List<Held> h = held;
        held = null;
        if (h != null) {
            for (Held w : h) {
                emit(w.bytes, w.done);
            }
            dirty = true;
        }
    }

    /** Forgets what was held (the write failed; an error reply follows instead). */
    public void dropHeld() {
        if (buf != null) {
            buf.release();
            buf = null;
        }
        java.util.List<Held> h = held;
        held = null;
        if (h != null) {
            for (Held w : h) {
                w.bytes.release();
                w.done.run();
            }
        }
    }

    /** Writes a bulk string from a buffer it takes over (a reply relayed from a peer). */
    public void bulk(ByteBuf payload) {
        RespWriter.bulkHeader(buf(), payload.readableBytes());
        if (payload.readableBytes() <= COPY_BELOW) {
            buf().writeBytes(payload);
            payload.release();
        } else {
            writeBuffered();
            emit(payload, () -> { });
        }
        RespWriter.crlf(buf());
    }

    private void emit(ByteBuf bytes, Runnable done) {
        if (ctx == null) {
            capture(bytes);
            done.run();
        } else if (held != null) {
            held.add(new Held(bytes, done));
        } else {
            outputBytes.add(bytes.readableBytes());
            ctx.write(bytes).addListener(f -> done.run());
        }
    }

    /** Writes a bulk-string header and flushes it, for a value that follows in {@link #writeNow} chunks. */
    public void bulkHeaderNow(long length) {
        RespWriter.bulkHeader(buf(), length);
        writeBuffered();
        if (ctx != null) {
            ctx.flush();
        }
    }

    /** Writes and flushes one chunk of a streamed value; the future tells when the socket took it. */
    public io.netty.util.concurrent.Future<Void> writeNow(ByteBuf chunk) {
        writeBuffered();
        if (ctx == null) {
            capture(chunk);
            return captureExecutor.newSucceededFuture(null);
        }
        outputBytes.add(chunk.readableBytes());
        return ctx.writeAndFlush(chunk);
    }

    /** Appends {@code bytes} (taking them over) to what a capturing reply collected, up to its limit. */
    private void capture(ByteBuf bytes) {
        try {
            if (captured == null || overflowed) {
                return;
            }
            if ((long) captured.readableBytes() + bytes.readableBytes() > captureLimit) {
                overflowed = true;
                captured.clear();
                return;
            }
            captured.writeBytes(bytes);
        } finally {
            bytes.release();
        }
    }

    /** Ends a streamed value. */
    public void crlfNow() {
        RespWriter.crlf(buf());
    }

    /** Closes the connection at once (a streamed value could not be completed). */
    public void abortConnection() {
        discard();
        if (ctx == null) {
            aborted = true;
        } else {
            ctx.close();
        }
    }

    private void writeBuffered() {
        if (buf != null && buf.isReadable()) {
            ByteBuf b = buf;
            buf = null;
            emit(b, () -> { });
        }
    }

    /** Sends everything written so far to the socket. */
    public void flush() {
        if (dirty) {
            writeBuffered();
            dirty = false;
            if (ctx != null) {
                ctx.flush();
            }
        }
    }

    /** Drops unsent small replies (connection closing). */
    public void discard() {
        dropHeld();
        if (buf != null) {
            buf.release();
            buf = null;
        }
    }
}
