package io.kvtier.resp;

import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.Arrays;

/*
 * Design
 * ------
 * An explicit state machine (after Netty's codec-redis RedisDecoder) that reproduces Redis 7.0's
 * processInlineBuffer/processMultibulkBuffer (src/networking.c) byte for byte, so that a client sees the same
 * replies and the same protocol errors it would see from Redis (checked against redis-server 7.0.15 on thousands of
 * random and corrupted pipelines):
 *
 *   START --'*'--> COUNT --n>0--> LENGTH --len<threshold--> PAYLOAD --> CRLF --more args--> LENGTH
 *     |              |n<=0 (skipped)  |---len>=threshold--> SINK --opened--^        '--last arg--> START (command)
 *     '--other--> INLINE --> START (command, or skipped when blank)
 *
 * Like Redis, a count or length line ends at the first '\r' and the byte after it is skipped unchecked, and the two
 * bytes after a payload are skipped unchecked. Redis raises "too big ... string" when more than 64 KiB are buffered
 * without a line end; that depends on how the bytes were split into reads, so here the rule is made independent of
 * splitting: the terminator must lie within the first maxInlineLength + 1 bytes of the line. Consequently a whole
 * input and any fragmentation of it decode to the same commands and the same error.
 *
 * Payloads below sinkThreshold are copied into a heap array; larger ones are streamed into a BulkSink as bytes
 * arrive, so a 512 MiB SET never needs 512 MiB of buffered input. When the factory has no sink (memory full), the
 * decoder parks in SINK and consumes nothing until a later decode() gets one: that is the backpressure signal.
 *
 * Line scanning (LineScanner) remembers how far it already looked, so a line arriving one byte at a time costs
 * O(n), not O(n^2) as in Redis.
 *
 * Request memory: the arguments of the command in progress count against two bounds, both checked before the bytes
 * arrive, so a request is refused at its header and never after the heap has grown. Its declared size (every
 * argument's length, wherever it goes, plus ARG_OVERHEAD per argument) is limited by Limits.maxRequestBytes, Redis's
 * client-query-buffer-limit. The heap it holds (arrays for small arguments, the argv slots) is charged to a
 * RequestBudget account shared by all connections, Redis's maxmemory-clients; a command handed out keeps its charge
 * until the caller reports it finished (commandFinished), since its arguments live until then.
 *
 * Failure: any exception aborts every sink of the command in progress and makes the decoder fail forever (the caller
 * replies with the RespException's text and closes the connection).
 *
 * C strings: Redis finds line ends with strchr, which stops at a NUL byte, so a count, length or inline line with a
 * NUL before its terminator never completes: the connection stalls until the too-big error. This decoder does the
 * same (LineScanner), so it never hands a NUL to RedisLong or InlineSplitter.
 */

/**
 * A streaming RESP request decoder that turns bytes into {@link RespCommand}s one at a time, with Redis 7.0's exact
 * limits and error texts. Not thread-safe: owned by one connection's event loop; it owns the sinks of the command in
 * progress until that command is returned.
 */
public final class RespDecoder {
    static final String TOO_BIG_MBULK = "ERR Protocol error: too big mbulk count string";
    static final String INVALID_MBULK = "ERR Protocol error: invalid multibulk length";
    static final String UNAUTH_MBULK = "ERR Protocol error: unauthenticated multibulk length";
    static final String TOO_BIG_BULK = "ERR Protocol error: too big bulk count string";
    static final String INVALID_BULK = "ERR Protocol error: invalid bulk length";
    static final String UNAUTH_BULK = "ERR Protocol error: unauthenticated bulk length";
    static final String TOO_BIG_INLINE = "ERR Protocol error: too big inline request";
    static final String QUERY_BUFFER_LIMIT = "ERR max query buffer length reached: this request declares more than %d"
            + " bytes (client-query-buffer-limit %d); closing the connection";
    static final String CLIENT_MEMORY = "ERR client memory limit reached: requests in progress of all clients would hold"
            + " more than %d bytes of heap (maxmemory-clients), this one the most; closing the connection";

    /** What one argument costs beyond its bytes: an array header and its slots in argv (two references). */
    static final int ARG_OVERHEAD = 32;
    /**
     * Heap one argument holds beyond its bytes, as charged to the budget: its array's header and padding (about 20),
     * its slots in argv and in the copy a queued command keeps (4 references of 4 bytes).
     */
    static final int HEAP_PER_ARG = 40;
    /**
     * Heap one command holds beyond its arguments: the command object, its two argv arrays' headers, and, queued in
     * MULTI, its slots in the transaction's lists. Charged for every command, inline ones too: four connections
     * queuing 1.7 M inline SETs each held about 1.2 GB that nothing counted, and stopped the node.
     */
    static final int HEAP_PER_COMMAND = 72;

    /** Redis's limits for connections that still have to AUTH (networking.c). */
    private static final int UNAUTH_MAX_ARGS = 10;
    private static final int UNAUTH_MAX_BULK = 16 * 1024;
    /** Redis grows argv in steps instead of trusting a huge count up front. */
    private static final int INITIAL_ARGS_CAPACITY = 1024;

    /**
     * Decoder limits, validated at construction.
     *
     * @param maxBulkLength      longest accepted bulk payload (Redis's proto-max-bulk-len)
     * @param maxMultibulkLength most arguments in one command (Redis 7.0 itself allows up to Integer.MAX_VALUE)
     * @param maxInlineLength    longest inline line, and longest count or length line (Redis: 64 KiB for all three)
     * @param sinkThreshold      payloads of at least this many bytes go to a {@link BulkSink}, smaller ones to the heap
     * @param maxRequestBytes    most bytes one request may declare, all arguments and {@link #ARG_OVERHEAD} each
     *                           (Redis's client-query-buffer-limit)
     */
    public record Limits(long maxBulkLength, int maxMultibulkLength, int maxInlineLength, int sinkThreshold,
                         long maxRequestBytes) {
        public Limits {
            requirePositive("maxBulkLength", maxBulkLength, Long.MAX_VALUE);
            requirePositive("maxRequestBytes", maxRequestBytes, Long.MAX_VALUE);
            requirePositive("maxMultibulkLength", maxMultibulkLength, Integer.MAX_VALUE);
            requirePositive("maxInlineLength", maxInlineLength, Integer.MAX_VALUE - 1);
            requirePositive("sinkThreshold", sinkThreshold, Integer.MAX_VALUE - 8);
        }

        /**
         * 1024 * 1024 arguments (Redis 6's limit; Redis 7.0 accepts up to Integer.MAX_VALUE), Redis's 64 KiB lines,
         * and sinks from 16 KiB on.
         */
        public static Limits defaults(long maxBulkLength) {
            return new Limits(maxBulkLength, 1024 * 1024, 64 * 1024, 16 * 1024, Long.MAX_VALUE);
        }

        /** Limits without a request size limit. */
        public Limits(long maxBulkLength, int maxMultibulkLength, int maxInlineLength, int sinkThreshold) {
            this(maxBulkLength, maxMultibulkLength, maxInlineLength, sinkThreshold, Long.MAX_VALUE);
        }

        /** These limits with {@code maxRequestBytes} as the request size limit. */
        public Limits withMaxRequestBytes(long maxRequestBytes) {
            return new Limits(maxBulkLength, maxMultibulkLength, maxInlineLength, sinkThreshold, maxRequestBytes);
        }

        private static void requirePositive(String name, long value, long max) {
            if (value < 1 || value > max) {
                throw new IllegalArgumentException(name + " " + value + " is outside [1, " + max + "]");
            }
        }
    }

    private enum State { START, INLINE, COUNT, LENGTH, SINK, PAYLOAD, CRLF, FAILED, CLOSED }

    private final Limits limits;
    private final BulkSinkFactory sinks;
    private final LineScanner lines;
    private final RequestBudget.Account heap;
    private boolean authenticated = true;

    private State state = State.START;
    private RuntimeException failure;

    // The command in progress.
    private int argCount;
    private int argIndex;
    private byte[][] small;
    private BulkSink[] large;
    private long bulkLength;
    private long remaining;
    private byte[] heapArg;
    private int crlfLeft;
    private RespCommand ready;
    private long declaredBytes;  // of the command in progress, against limits.maxRequestBytes
    private long heapCharged;    // of the command in progress, charged to the heap account
    private long heapHeld;       // of commands handed out and not yet finished

    /** A decoder whose heap is not shared with other connections' (tests, tools). */
    public RespDecoder(Limits limits, BulkSinkFactory sinks) {
        this(limits, sinks, RequestBudget.unlimited().open(() -> { }));
    }

    /** @param heap the account that the heap held by this connection's requests is charged to */
    public RespDecoder(Limits limits, BulkSinkFactory sinks, RequestBudget.Account heap) {
        if (limits == null || sinks == null || heap == null) {
            throw new IllegalArgumentException("limits, sinks and heap account are required");
        }
        this.limits = limits;
        this.sinks = sinks;
        this.heap = heap;
        this.lines = new LineScanner(limits.maxInlineLength());
    }

    /** The error a connection gets when the shared heap budget evicts it (also what {@link #decode} throws then). */
    public static String clientMemoryError(long limit) {
        return String.format(CLIENT_MEMORY, limit);
    }

    /** Heap bytes charged for the command in progress and for commands handed out but not finished. */
    public long heapBytes() {
        return heapCharged + heapHeld;
    }

    /** Whether bytes of a command have been consumed but the command is not complete yet. */
    public boolean inRequest() {
        return state != State.START && state != State.FAILED && state != State.CLOSED;
    }

    /**
     * Reports that every command handed out so far has finished, so their arguments' heap is given back to the
     * budget. Call once a command's execution (synchronous or not) is over.
     */
    public void commandFinished() {
        heap.release(heapHeld);
        heapHeld = 0;
    }

    /**
     * Decodes at most one command, consuming its bytes from {@code in} (never bytes of the next command). Blank inline
     * lines and empty multibulk commands ({@code *0}, {@code *-1}) are skipped.
     *
     * @return the command, or {@code null} when more bytes are needed or no sink could be opened
     *         ({@link #isWaitingForSink()}; call again later to retry)
     * @throws RespException on a protocol error, with Redis's text; the decoder is then failed for good
     */
    public RespCommand decode(ByteBuf in) {
        if (state == State.FAILED) {
            throw failure instanceof RespException e ? e : new IllegalStateException("decoder failed", failure);
        }
        if (state == State.CLOSED) {
            throw new IllegalStateException("decoder is closed");
        }
        try {
            return step(in);
        } catch (RuntimeException e) {
            try {
                abortSinks();
            } catch (RuntimeException abortFailure) {
                e.addSuppressed(abortFailure);
            }
            state = State.FAILED;
            failure = e;
            throw e;
        }
    }

    /** True while a bulk header has been read but the factory had no sink for its payload. */
    public boolean isWaitingForSink() {
        return state == State.SINK;
    }

    /**
     * Set false while the connection is not authenticated (a password is configured): then Redis's stricter limits
     * apply (at most 10 arguments and 16 KiB bulks).
     */
    public void setAuthenticated(boolean authenticated) {
        this.authenticated = authenticated;
    }

    /**
     * The memory that the next payload bytes of the command in progress go to, never beyond the payload, when they go
     * to a sink that lends it ({@link BulkSink#window}); else {@code null}. A caller with no buffered input may read
     * the socket straight into it, then report the bytes with {@link #payloadReceived}: the payload then costs the
     * kernel's copy only. Also {@code null} when the window would hold just the payload's last bytes, fewer than
     * {@code minTail}: those are better read in one go with the CRLF and the next command.
     */
    public ByteBuffer payloadWindow(int minTail) {
        if (state != State.PAYLOAD || remaining == 0 || large[argIndex] == null) {
            return null;
        }
        ByteBuffer window = large[argIndex].window((int) Math.min(Integer.MAX_VALUE, remaining));
        return window == null || window.remaining() == remaining && remaining < minTail ? null : window;
    }

    /** Counts {@code n} payload bytes that the caller put into the last {@link #payloadWindow}. */
    public void payloadReceived(int n) {
        if (state != State.PAYLOAD || large[argIndex] == null || n < 0 || n > remaining) {
            throw new IllegalStateException(n + " bytes received in place, but the decoder is in state " + state
                    + " with " + remaining + " payload bytes to go");
        }
        large[argIndex].advance(n);
        remaining -= n;
        if (remaining == 0) {
            crlfLeft = 2;
            state = State.CRLF;
        }
    }

    /** Aborts any partially filled sink of the command in progress (connection closed). Idempotent. */
    public void close() {
        try {
            abortSinks();
        } finally {
            commandFinished();
            heap.close();
            if (state != State.FAILED) {
                state = State.CLOSED;
            }
        }
    }

    private RespCommand step(ByteBuf in) {
        while (true) {
            boolean advanced = switch (state) {
                case START -> start(in);
                case INLINE -> inline(in);
                case COUNT -> count(in);
                case LENGTH -> length(in);
                case SINK -> openSink();
                case PAYLOAD -> payload(in);
                case CRLF -> crlf(in);
                case FAILED, CLOSED -> throw new IllegalStateException("unreachable: " + state);
            };
            if (ready != null) {
                RespCommand command = ready;
                ready = null;
                return command;
            }
            if (!advanced) {
                return null;
            }
        }
    }

    private boolean start(ByteBuf in) {
        if (!in.isReadable()) {
            return false;
        }
        state = in.getByte(in.readerIndex()) == '*' ? State.COUNT : State.INLINE;
        return true;
    }

    private boolean inline(ByteBuf in) {
        int newline = lines.find(in, (byte) '\n', TOO_BIG_INLINE);
        if (newline < 0) {
            return false;
        }
        int from = in.readerIndex();
        int to = newline > from && in.getByte(newline - 1) == '\r' ? newline - 1 : newline;
        byte[] line = new byte[to - from];
        in.getBytes(from, line);
        byte[][] args = InlineSplitter.split(line);
        lines.consume(in, newline + 1);
        state = State.START;
        if (args.length > 0) {
            // A line is at most maxInlineLength bytes: charged once split, as a multibulk command's would be.
            chargeHeap(HEAP_PER_COMMAND + (long) args.length * HEAP_PER_ARG + line.length);
            ready = new RespCommand(args, new BulkSink[args.length]);
            heapHeld += heapCharged;
            heapCharged = 0;
        }
        return true;
    }

    private boolean count(ByteBuf in) {
        int cr = lines.findCrAndOneMore(in, TOO_BIG_MBULK);
        if (cr < 0) {
            return false;
        }
        long n = RedisLong.parse(in, in.readerIndex() + 1, cr, INVALID_MBULK);
        if (n > limits.maxMultibulkLength()) {
            throw new RespException(INVALID_MBULK);
        }
        if (n > UNAUTH_MAX_ARGS && !authenticated) {
            throw new RespException(UNAUTH_MBULK);
        }
        lines.consume(in, cr + 2);
        if (n <= 0) {
            state = State.START;
            return true;
        }
        argCount = (int) n;
        argIndex = 0;
        declaredBytes = 0;
        int capacity = Math.min(argCount, INITIAL_ARGS_CAPACITY);
        chargeHeap(HEAP_PER_COMMAND + (long) capacity * HEAP_PER_ARG);
        small = new byte[capacity][];
        large = new BulkSink[capacity];
        state = State.LENGTH;
        return true;
    }

    private boolean length(ByteBuf in) {
        int cr = lines.findCrAndOneMore(in, TOO_BIG_BULK);
        if (cr < 0) {
            return false;
        }
        byte first = in.getByte(in.readerIndex());
        if (first != '$') {
            throw new RespException("ERR Protocol error: expected '$', got '" + printable(first) + "'");
        }
        long length = RedisLong.parse(in, in.readerIndex() + 1, cr, INVALID_BULK);
        if (length < 0 || length > limits.maxBulkLength()) {
            throw new RespException(INVALID_BULK);
        }
        if (length > UNAUTH_MAX_BULK && !authenticated) {
            throw new RespException(UNAUTH_BULK);
        }
        lines.consume(in, cr + 2);
        declare(length);
        ensureArgCapacity();
        bulkLength = length;
        remaining = length;
        if (length < limits.sinkThreshold()) {
            chargeHeap(length);
            heapArg = new byte[(int) length];
            state = State.PAYLOAD;
        } else {
            state = State.SINK;
        }
        return true;
    }

    private boolean openSink() {
        BulkSink sink = sinks.open(argIndex, bulkLength);
        if (sink == null) {
            return false;
        }
        large[argIndex] = sink;
        state = State.PAYLOAD;
        return true;
    }

    private boolean payload(ByteBuf in) {
        if (remaining > 0) {
            int n = (int) Math.min(in.readableBytes(), remaining);
            if (n == 0) {
                return false;
            }
            copyPayload(in, n);
            remaining -= n;
            if (remaining > 0) {
                return false;
            }
        }
        if (large[argIndex] == null) {
            small[argIndex] = heapArg;
        }
        heapArg = null;
        crlfLeft = 2;
        state = State.CRLF;
        return true;
    }

    private void copyPayload(ByteBuf in, int n) {
        BulkSink sink = large[argIndex];
        if (sink == null) {
            in.readBytes(heapArg, (int) (bulkLength - remaining), n);
            return;
        }
        int expected = in.readerIndex() + n;
        sink.write(in, n);
        if (in.readerIndex() != expected) {
            throw new IllegalStateException("sink " + sink + " consumed " + (in.readerIndex() - expected + n)
                    + " bytes instead of " + n);
        }
    }

    /** Skips the two bytes after a payload without checking them, as Redis does. */
    private boolean crlf(ByteBuf in) {
        int n = Math.min(in.readableBytes(), crlfLeft);
        in.skipBytes(n);
        crlfLeft -= n;
        if (crlfLeft > 0) {
            return false;
        }
        if (++argIndex < argCount) {
            state = State.LENGTH;
            return true;
        }
        ready = new RespCommand(small, large);
        small = null;
        large = null;
        heapHeld += heapCharged;
        heapCharged = 0;
        state = State.START;
        return true;
    }

    /** Counts an argument of {@code length} bytes against the request size limit, before any of it is read. */
    private void declare(long length) {
        declaredBytes += length + ARG_OVERHEAD;
        if (declaredBytes > limits.maxRequestBytes()) {
            throw new RespException(String.format(QUERY_BUFFER_LIMIT, limits.maxRequestBytes(),
                    limits.maxRequestBytes()));
        }
    }

    /** Charges heap the command in progress is about to hold; refuses it if the shared budget evicts this one. */
    private void chargeHeap(long n) {
        if (heap.evicted() || !heap.charge(n)) {
            throw new RespException(String.format(CLIENT_MEMORY, heap.budget().limit()));
        }
        heapCharged += n;
    }

    private void ensureArgCapacity() {
        if (argIndex == small.length) {
            int capacity = (int) Math.min(argCount, 2L * small.length);
            chargeHeap((long) (capacity - small.length) * HEAP_PER_ARG);
            small = Arrays.copyOf(small, capacity);
            large = Arrays.copyOf(large, capacity);
        }
    }

    /** Redis's addReplyErrorFormat turns CR and LF into spaces so the error stays on one line. */
    private static char printable(byte b) {
        return b == '\r' || b == '\n' ? ' ' : (char) (b & 0xff);
    }

    /** Aborts every sink held, even if some abort throws (the first such exception is rethrown at the end). */
    private void abortSinks() {
        BulkSink[] held = large;
        small = null;
        large = null;
        heapArg = null;
        heap.release(heapCharged);
        heapCharged = 0;
        RuntimeException first = null;
        for (int i = 0; held != null && i < held.length; i++) {
            try {
                if (held[i] != null) {
                    held[i].abort();
                }
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
