package io.kvtier.resp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/*
 * Design
 * ------
 * The client-side counterpart of RespDecoder: an explicit state machine over server replies, RESP2 and RESP3.
 *
 *   LINE --'$' '=' '!' len>=0--> PAYLOAD --len bytes--> PAYLOAD_END --CRLF--> value
 *     |---'*' '%' '~' '>' '|' n>0--> open a frame, LINE
 *     '---everything else (and $-1, *-1, empty aggregates)--> value
 *
 * A finished value goes into the innermost open frame; a frame that has all its elements becomes a value itself
 * (an attribute frame '|' is released instead: attributes are skipped); a value with no frame open is the reply.
 * So nesting costs one small frame per level and no recursion, and limits bound both width and depth.
 *
 * Copies: a bulk payload goes straight from the input into a buffer of exactly its length, taken from the caller's
 * allocator when the header is read and filled as reads arrive; the input is consumed as it is copied, so a
 * cumulating caller never buffers more than one read of it. A bulk longer than BULK_PART is a composite of parts of
 * that size: allocators pool buffers up to a few MiB, and a fresh contiguous 32 MiB buffer per reply cost the
 * benchmark client more CPU in page faults (55% of it) than the reading itself. Lines are scanned once however they are split
 * (the search resumes where it stopped).
 *
 * Strictness: every line must end in CRLF and every payload be followed by CRLF; a reply that does not is a
 * RespReplyException. Unlike RespDecoder, nothing here needs to mimic Redis's leniency towards clients.
 *
 * Ownership: the decoder owns the bulk being filled and the elements of open frames; on failure or close() it
 * releases them (the factory's release() for elements). Everything returned belongs to the caller.
 */

/**
 * A streaming decoder of server replies that returns one complete reply at a time, built by a {@link ReplyFactory}.
 * Not thread-safe: owned by one connection's event loop.
 *
 * @param <T> the caller's reply type
 */
public final class RespReplyDecoder<T> {
    /** Open aggregates get list capacity for at most this many elements up front; lists grow beyond it. */
    private static final int INITIAL_ELEMENTS_CAPACITY = 1024;
    /** Room for any 64-bit integer: "-9223372036854775808". */
    private static final int MIN_LINE_LENGTH = 20;
    /** A line holds a type byte and CR LF besides its content. */
    private static final int LINE_OVERHEAD = 3;
    /** Longer bulks are assembled from parts of this size. */
    static final int BULK_PART = 1 << 20;

    /**
     * Decoder limits, validated at construction.
     *
     * @param maxBulkLength      longest bulk, verbatim or blob-error payload
     * @param maxAggregateLength most elements in one aggregate (a map of n entries has 2n)
     * @param maxDepth           most aggregates open at once (1 = no nesting)
     * @param maxLineLength      longest line content: simple strings, errors, numbers; at least 20, the length of
     *                           the longest 64-bit integer
     */
    public record Limits(int maxBulkLength, int maxAggregateLength, int maxDepth, int maxLineLength) {
        public Limits {
            requireAtLeast("maxBulkLength", maxBulkLength, 1);
            requireAtLeast("maxAggregateLength", maxAggregateLength, 1);
            requireAtLeast("maxDepth", maxDepth, 1);
            requireAtLeast("maxLineLength", maxLineLength, MIN_LINE_LENGTH);
        }

        /** 512 MiB bulks (Redis's proto-max-bulk-len), 64 Mi elements, depth 32, 1 MiB lines. */
        public static Limits defaults() {
            return new Limits(512 << 20, 64 << 20, 32, 1 << 20);
        }

        private static void requireAtLeast(String name, int value, int min) {
            if (value < min) {
                throw new IllegalArgumentException(name + " " + value + " is below the minimum " + min);
            }
        }
    }

    private enum State { LINE, PAYLOAD, PAYLOAD_END, FAILED, CLOSED }

    /** An aggregate being filled: {@code expected} elements in all, those decoded so far in {@code elements}. */
    private record Frame<T>(char type, long expected, List<T> elements) {
    }

    private final Limits limits;
    private final ByteBufAllocator alloc;
    private final ReplyFactory<T> factory;
    private final ArrayDeque<Frame<T>> frames = new ArrayDeque<>();

    private State state = State.LINE;
    private RuntimeException failure;
    /** Bytes of the current line already searched for its LF, relative to the reader index. */
    private int scanned;
    private char bulkType;
    private ByteBuf bulk;
    private T ready;

    public RespReplyDecoder(Limits limits, ByteBufAllocator alloc, ReplyFactory<T> factory) {
        if (limits == null || alloc == null || factory == null) {
            throw new IllegalArgumentException("limits, alloc and factory are required");
        }
        this.limits = limits;
        this.alloc = alloc;
        this.factory = factory;
    }

    /**
     * Decodes at most one reply, consuming its bytes from {@code in} (never bytes of the next reply). The caller may
     * discard consumed bytes between calls.
     *
     * @return the reply, or {@code null} when more bytes are needed
     * @throws RespReplyException when the reply breaks the protocol or a limit; the decoder is then failed for good
     */
    public T decode(ByteBuf in) {
        if (state == State.FAILED) {
            throw failure instanceof RespReplyException e ? e : new IllegalStateException("decoder failed", failure);
        }
        if (state == State.CLOSED) {
            throw new IllegalStateException("decoder is closed");
        }
        try {
            return step(in);
        } catch (RuntimeException e) {
            try {
                releaseHeld();
            } catch (RuntimeException releaseFailure) {
                e.addSuppressed(releaseFailure);
            }
            state = State.FAILED;
            failure = e;
            throw e;
        }
    }

    /** Releases the bulk being filled and the elements of open aggregates (connection closed). Idempotent. */
    public void close() {
        releaseHeld();
        if (state != State.FAILED) {
            state = State.CLOSED;
        }
    }

    private T step(ByteBuf in) {
        while (true) {
            boolean advanced = switch (state) {
                case LINE -> line(in);
                case PAYLOAD -> payload(in);
                case PAYLOAD_END -> payloadEnd(in);
                case FAILED, CLOSED -> throw new IllegalStateException("unreachable: " + state);
            };
            if (ready != null) {
                T reply = ready;
                ready = null;
                return reply;
            }
            if (!advanced) {
                return null;
            }
        }
    }

    private boolean line(ByteBuf in) {
        int lf = findLineFeed(in);
        if (lf < 0) {
            return false;
        }
        int start = in.readerIndex();
        if (lf - 1 <= start || in.getByte(lf - 1) != '\r') {
            throw new RespReplyException("reply line " + quote(in, start, lf + 1) + " does not end in CRLF"
                    + " after a type byte");
        }
        char type = (char) (in.getByte(start) & 0xff);
        int from = start + 1;
        int to = lf - 1;
        in.readerIndex(lf + 1);
        scanned = 0;
        switch (type) {
            case '+' -> complete(factory.simple(text(in, from, to)));
            case '-' -> complete(factory.error(text(in, from, to)));
            case ':' -> complete(factory.integer(number(in, from, to, type)));
            case '_' -> nullLine(in, from, to);
            case ',', '#', '(' -> complete(factory.other(type, text(in, from, to)));
            case '$', '=', '!' -> startBulk(type, number(in, from, to, type));
            case '*', '%', '~', '>', '|' -> startAggregate(type, number(in, from, to, type));
            default -> throw new RespReplyException("unknown reply type " + quote(in, start, lf + 1));
        }
        return true;
    }

    /** Index of the current line's LF, or -1 while it may still arrive within {@link Limits#maxLineLength}. */
    private int findLineFeed(ByteBuf in) {
        int from = in.readerIndex();
        long maxLine = limits.maxLineLength() + (long) LINE_OVERHEAD;
        int window = (int) Math.min(in.readableBytes(), maxLine);
        if (scanned < window) {
            int lf = in.indexOf(from + scanned, from + window, (byte) '\n');
            if (lf >= 0) {
                return lf;
            }
            scanned = window;
        }
        if (in.readableBytes() >= maxLine) {
            // Quotes no more than maxLine bytes, which are always there: the message must not depend on the reads.
            throw new RespReplyException("reply line longer than maxLineLength " + limits.maxLineLength()
                    + " bytes: " + quote(in, from, from + (int) maxLine) + "...");
        }
        return -1;
    }

    private void nullLine(ByteBuf in, int from, int to) {
        if (to != from) {
            throw new RespReplyException("null reply '_' carries " + quote(in, from, to));
        }
        complete(factory.nullValue());
    }

    private void startBulk(char type, long length) {
        if (length == -1 && type == '$') {
            complete(factory.nullValue());
            return;
        }
        if (length < 0 || length > limits.maxBulkLength()) {
            throw new RespReplyException("'" + type + "' length " + length + " is outside [0, maxBulkLength "
                    + limits.maxBulkLength() + "]");
        }
        bulk = bulkBuffer((int) length);
        bulkType = type;
        state = State.PAYLOAD;
    }

    /** An empty buffer of exactly {@code length} bytes' capacity, in parts of at most {@link #BULK_PART}. */
    private ByteBuf bulkBuffer(int length) {
        if (length <= BULK_PART) {
            return alloc.buffer(length, length);
        }
        CompositeByteBuf parts = alloc.compositeBuffer((length - 1) / BULK_PART + 1);
        try {
            for (int left = length; left > 0; left -= BULK_PART) {
                int n = Math.min(left, BULK_PART);
                // A component's readable bytes are its share of the composite's capacity; the composite stays empty.
                parts.addComponent(false, alloc.buffer(n, n).writerIndex(n));
            }
        } catch (Throwable e) { // OutOfDirectMemoryError included: the parts taken so far go back
            parts.release();
            throw e;
        }
        return parts;
    }

    private boolean payload(ByteBuf in) {
        int n = Math.min(in.readableBytes(), bulk.writableBytes());
        bulk.writeBytes(in, n);
        if (bulk.isWritable()) {
            return false;
        }
        state = State.PAYLOAD_END;
        return true;
    }

    private boolean payloadEnd(ByteBuf in) {
        if (in.readableBytes() < 2) {
            return false;
        }
        int at = in.readerIndex();
        if (in.getByte(at) != '\r' || in.getByte(at + 1) != '\n') {
            throw new RespReplyException("'" + bulkType + "' payload of " + bulk.capacity()
                    + " bytes is followed by " + quote(in, at, at + 2) + " instead of CRLF");
        }
        in.skipBytes(2);
        ByteBuf content = bulk;
        bulk = null;
        state = State.LINE;
        if (bulkType == '$') {
            complete(factory.bulk(content));
            return true;
        }
        String text;
        try {
            text = content.toString(StandardCharsets.UTF_8);
        } finally {
            content.release();
        }
        complete(bulkType == '!' ? factory.error(text) : factory.other(bulkType, text));
        return true;
    }

    private void startAggregate(char type, long count) {
        if (count == -1 && type == '*') {
            complete(factory.nullValue());
            return;
        }
        long elements = type == '%' || type == '|' ? 2 * count : count;
        if (count < 0 || count > limits.maxAggregateLength() || elements > limits.maxAggregateLength()) {
            throw new RespReplyException("'" + type + "' aggregate of " + count + (elements != count ? " pairs" : "")
                    + " is outside [0, maxAggregateLength " + limits.maxAggregateLength() + " elements]");
        }
        if (elements == 0) {
            if (type != '|') {
                complete(factory.aggregate(type, new ArrayList<>(0)));
            }
            return;
        }
        if (frames.size() >= limits.maxDepth()) {
            throw new RespReplyException("'" + type + "' aggregate nested deeper than maxDepth " + limits.maxDepth());
        }
        frames.push(new Frame<>(type, elements, new ArrayList<>((int) Math.min(elements,
                INITIAL_ELEMENTS_CAPACITY))));
    }

    /** Puts a finished value into the innermost open aggregate, closing aggregates it fills, or makes it the reply. */
    private void complete(T value) {
        while (true) {
            if (value == null) {
                throw new IllegalStateException("the reply factory returned null");
            }
            Frame<T> top = frames.peek();
            if (top == null) {
                ready = value;
                return;
            }
            top.elements().add(value);
            if (top.elements().size() < top.expected()) {
                return;
            }
            frames.pop();
            if (top.type() == '|') {
                top.elements().forEach(factory::release);
                return;
            }
            value = factory.aggregate(top.type(), top.elements());
        }
    }

    private static long number(ByteBuf in, int from, int to, char type) {
        try {
            return RedisLong.parse(in, from, to, "");
        } catch (RespException e) {
            throw new RespReplyException("invalid number " + quote(in, from, to) + " after '" + type + "'");
        }
    }

    private static String text(ByteBuf in, int from, int to) {
        return in.toString(from, to - from, StandardCharsets.UTF_8);
    }

    /** Up to 32 bytes of {@code [from, to)} for an error message, CR and LF escaped. */
    private static String quote(ByteBuf in, int from, int to) {
        int end = Math.min(Math.min(to, in.writerIndex()), from + 32);
        String raw = in.toString(from, Math.max(0, end - from), StandardCharsets.ISO_8859_1);
        return "'" + raw.replace("\r", "\\r").replace("\n", "\\n") + "'";
    }

    /** Releases everything held, even if a release throws (the first such exception is rethrown at the end). */
    private void releaseHeld() {
        RuntimeException first = null;
        if (bulk != null) {
            ByteBuf held = bulk;
            bulk = null;
            first = releaseQuietly(held::release, first);
        }
        for (Frame<T> frame; (frame = frames.poll()) != null; ) {
            for (T element : frame.elements()) {
                first = releaseQuietly(() -> factory.release(element), first);
            }
        }
        if (first != null) {
            throw first;
        }
    }

    private static RuntimeException releaseQuietly(Runnable release, RuntimeException first) {
        try {
            release.run();
            return first;
        } catch (RuntimeException e) {
            if (first == null) {
                return e;
            }
            first.addSuppressed(e);
            return first;
        }
    }
}
