package io.kvtier.client;

import io.kvtier.resp.RespWriter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.ArrayList;
import java.util.List;

/**
 * Encodes a command as a RESP multibulk into buffers ready to write: one buffer holding headers and small arguments,
 * split around each large {@link ByteBuf} argument, which is passed on as it is (no copy). Takes ownership of every
 * ByteBuf argument, even when it throws. Stateless.
 */
final class CommandEncoder {
    /** ByteBuf arguments from this size on are written as they are; smaller ones are copied and released. */
    static final int ZERO_COPY_THRESHOLD = 16 * 1024;
    /** Room for a "$<length>\r\n" header and the CRLF after the payload. */
    private static final int PER_ARG_OVERHEAD = 16;

    private CommandEncoder() {
    }

    /**
     * @param args byte arrays, ByteBufs (readable bytes) or Strings (UTF-8)
     * @return the buffers to write, in order
     * @throws IllegalArgumentException when there are no arguments, or one is null, released or of another type
     */
    static ByteBuf[] encode(ByteBufAllocator alloc, Object[] args) {
        validate(args);
        List<ByteBuf> parts = null;
        ByteBuf out = null;
        // Arguments before this index, and this one when nextTaken, are released or in parts.
        int next = 0;
        boolean nextTaken = false;
        try {
            out = alloc.buffer(inlineSize(args, 0));
            RespWriter.arrayHeader(out, args.length);
            for (; next < args.length; next++) {
                nextTaken = false;
                if (args[next] instanceof ByteBuf payload && payload.readableBytes() >= ZERO_COPY_THRESHOLD) {
                    RespWriter.bulkHeader(out, payload.readableBytes());
                    parts = parts == null ? new ArrayList<>(4) : parts;
                    parts.add(out);
                    out = null;
                    parts.add(payload);
                    nextTaken = true;
                    out = alloc.buffer(inlineSize(args, next + 1));
                    RespWriter.crlf(out);
                } else {
                    nextTaken = args[next] instanceof ByteBuf;
                    writeInline(out, args[next]);
                }
            }
        } catch (RuntimeException | Error e) {
            releaseAll(out, parts, args, nextTaken ? next + 1 : next);
            throw e;
        }
        if (parts == null) {
            return new ByteBuf[] {out};
        }
        parts.add(out);
        return parts.toArray(ByteBuf[]::new);
    }

    /** Releases every ByteBuf in {@code args}: a command that cannot be sent still owns its arguments. */
    static void releaseArgs(Object[] args) {
        if (args != null) {
            for (Object arg : args) {
                if (arg instanceof ByteBuf buf && buf.refCnt() > 0) {
                    buf.release();
                }
            }
        }
    }

    private static void validate(Object[] args) {
        String problem = null;
        if (args == null || args.length == 0) {
            problem = "a command needs at least one argument";
        } else {
            for (int i = 0; i < args.length && problem == null; i++) {
                problem = switch (args[i]) {
                    case null -> "argument " + i + " is null";
                    case ByteBuf buf when buf.refCnt() == 0 -> "argument " + i + " is a released ByteBuf";
                    case byte[] bytes -> null;
                    case ByteBuf buf -> null;
                    case String text -> null;
                    default -> "argument " + i + " is a " + args[i].getClass().getName()
                            + "; pass a byte[], ByteBuf or String";
                };
            }
        }
        if (problem != null) {
            releaseArgs(args);
            throw new IllegalArgumentException(problem);
        }
    }

    /** Bytes needed for the inline part of {@code args} from {@code from} up to the next large ByteBuf. */
    private static int inlineSize(Object[] args, int from) {
        long size = PER_ARG_OVERHEAD;
        for (int i = from; i < args.length; i++) {
            size += PER_ARG_OVERHEAD + switch (args[i]) {
                case byte[] bytes -> bytes.length;
                case String text -> text.length();
                case ByteBuf buf when buf.readableBytes() < ZERO_COPY_THRESHOLD -> buf.readableBytes();
                default -> 0;
            };
            if (args[i] instanceof ByteBuf buf && buf.readableBytes() >= ZERO_COPY_THRESHOLD) {
                break;
            }
        }
        return (int) Math.min(size, Integer.MAX_VALUE - 8);
    }

    private static void writeInline(ByteBuf out, Object arg) {
        switch (arg) {
            case byte[] bytes -> RespWriter.bulk(out, bytes);
            case String text -> RespWriter.bulk(out, text);
            case ByteBuf payload -> {
                try {
                    RespWriter.bulkHeader(out, payload.readableBytes());
                    out.writeBytes(payload, payload.readerIndex(), payload.readableBytes());
                    RespWriter.crlf(out);
                } finally {
                    payload.release();
                }
            }
            default -> throw new IllegalStateException("unreachable: validated " + arg.getClass());
        }
    }

    /** After a failure: releases what was built and the ByteBuf arguments from {@code untaken} on. */
    private static void releaseAll(ByteBuf out, List<ByteBuf> parts, Object[] args, int untaken) {
        if (out != null) {
            out.release();
        }
        if (parts != null) {
            parts.forEach(ByteBuf::release);
        }
        for (int i = untaken; i < args.length; i++) {
            if (args[i] instanceof ByteBuf buf) {
                buf.release();
            }
        }
    }
}
