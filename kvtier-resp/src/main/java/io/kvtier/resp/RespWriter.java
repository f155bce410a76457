package io.kvtier.resp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.nio.charset.StandardCharsets;

/**
 * Encodes replies into a {@link ByteBuf}, byte-identical to Redis 7.0 for protocol version 2 (RESP2) or 3 (RESP3),
 * where the version is the connection's {@code HELLO} protocol. Numbers are written as ASCII straight into the buffer,
 * without intermediate Strings; text is written as UTF-8. Stateless and thread-safe.
 */
public final class RespWriter {
    public static final int RESP2 = 2;
    public static final int RESP3 = 3;

    private static final short CRLF = ('\r' << 8) | '\n';
    private static final byte[] OK = ascii("+OK\r\n");
    private static final byte[] ZERO = ascii(":0\r\n");
    private static final byte[] ONE = ascii(":1\r\n");
    private static final byte[] NULL_BULK = ascii("$-1\r\n");
    private static final byte[] NULL_ARRAY = ascii("*-1\r\n");
    private static final byte[] NULL = ascii("_\r\n");
    private static final byte[] TRUE = ascii("#t\r\n");
    private static final byte[] FALSE = ascii("#f\r\n");
    private static final byte[] VERBATIM_TXT = ascii("txt:");

    private RespWriter() {
    }

    /** {@code +text\r\n}; CR and LF in {@code text} become spaces, as Redis does for generated status texts. */
    public static void simpleString(ByteBuf buf, String text) {
        buf.writeByte('+');
        writeLine(buf, text);
    }

    /** {@code +OK\r\n}, from a shared constant. */
    public static void ok(ByteBuf buf) {
        buf.writeBytes(OK);
    }

    /**
     * {@code -text\r\n}; {@code text} carries its own code, e.g. {@code "ERR unknown command"} or
     * {@code "WRONGTYPE ..."}. CR and LF become spaces, as in Redis's {@code addReplyErrorFormat}. Unlike other text,
     * an error is written one byte per char (ISO-8859-1; '?' past U+00FF): Redis echoes client bytes into errors
     * unchanged, so callers quote arguments decoded one char per byte and get the very bytes back.
     */
    public static void error(ByteBuf buf, String text) {
        buf.writeByte('-');
        if (text.indexOf('\r') >= 0 || text.indexOf('\n') >= 0) {
            text = text.replace('\r', ' ').replace('\n', ' ');
        }
        buf.writeCharSequence(text, StandardCharsets.ISO_8859_1);
        crlf(buf);
    }

    /** {@code :value\r\n}; 0 and 1 come from shared constants. */
    public static void integer(ByteBuf buf, long value) {
        if (value == 0 || value == 1) {
            buf.writeBytes(value == 0 ? ZERO : ONE);
            return;
        }
        buf.writeByte(':');
        writeDecimal(buf, value);
        crlf(buf);
    }

    /** {@code $n\r\npayload\r\n}. */
    public static void bulk(ByteBuf buf, byte[] payload) {
        bulkHeader(buf, payload.length);
        buf.writeBytes(payload);
        crlf(buf);
    }

    /** A bulk string holding {@code text} as UTF-8. */
    public static void bulk(ByteBuf buf, String text) {
        bulkHeader(buf, ByteBufUtil.utf8Bytes(text));
        ByteBufUtil.writeUtf8(buf, text);
        crlf(buf);
    }

    /** {@code $length\r\n}: the caller then writes exactly {@code length} payload bytes and {@link #crlf}. */
    public static void bulkHeader(ByteBuf buf, long length) {
        header(buf, '$', length);
    }

    public static void crlf(ByteBuf buf) {
        buf.writeShort(CRLF);
    }

    /** A missing string: RESP2 {@code $-1\r\n}, RESP3 {@code _\r\n}. */
    public static void nullBulk(ByteBuf buf, int proto) {
        buf.writeBytes(isResp3(proto) ? NULL : NULL_BULK);
    }

    /** A missing array: RESP2 {@code *-1\r\n}, RESP3 {@code _\r\n}. */
    public static void nullArray(ByteBuf buf, int proto) {
        buf.writeBytes(isResp3(proto) ? NULL : NULL_ARRAY);
    }

    /** {@code *n\r\n}, followed by {@code n} replies. */
    public static void arrayHeader(ByteBuf buf, long n) {
        header(buf, '*', n);
    }

    /** RESP3 {@code %n\r\n}; RESP2 {@code *2n\r\n} (a flat key, value, ... array). Followed by {@code 2n} replies. */
    public static void mapHeader(ByteBuf buf, long n, int proto) {
        if (isResp3(proto)) {
            header(buf, '%', n);
        } else {
            header(buf, '*', 2 * n);
        }
    }

    /** RESP3 {@code ~n\r\n}; RESP2 {@code *n\r\n}. Followed by {@code n} replies. */
    public static void setHeader(ByteBuf buf, long n, int proto) {
        header(buf, isResp3(proto) ? '~' : '*', n);
    }

    /** RESP3 {@code #t\r\n}/{@code #f\r\n}; RESP2 {@code :1\r\n}/{@code :0\r\n}. */
    public static void bool(ByteBuf buf, boolean value, int proto) {
        if (isResp3(proto)) {
            buf.writeBytes(value ? TRUE : FALSE);
        } else {
            buf.writeBytes(value ? ONE : ZERO);
        }
    }

    /**
     * RESP3 {@code ,text\r\n}; RESP2 a bulk string of the same text. The text is Redis 7.0's {@code "%.17g"}
     * ({@code 1.5}, {@code 3}, {@code 0.10000000000000001}, {@code 1e+20}), or {@code inf}/{@code -inf}.
     */
    public static void doubleValue(ByteBuf buf, double value, int proto) {
        String text = RedisDouble.format(value);
        if (isResp3(proto)) {
            buf.writeByte(',');
            buf.writeCharSequence(text, StandardCharsets.US_ASCII);
            crlf(buf);
        } else {
            bulk(buf, text);
        }
    }

    /**
     * RESP3 {@code =len\r\ntxt:text\r\n} (len counts the 4-byte "txt:" prefix, text is UTF-8); RESP2 a bulk string
     * of {@code text}.
     */
    public static void verbatim(ByteBuf buf, String text, int proto) {
        if (!isResp3(proto)) {
            bulk(buf, text);
            return;
        }
        header(buf, '=', ByteBufUtil.utf8Bytes(text) + (long) VERBATIM_TXT.length);
        buf.writeBytes(VERBATIM_TXT);
        ByteBufUtil.writeUtf8(buf, text);
        crlf(buf);
    }

    private static void header(ByteBuf buf, char type, long n) {
        buf.writeByte(type);
        writeDecimal(buf, n);
        crlf(buf);
    }

    private static void writeLine(ByteBuf buf, String text) {
        if (text.indexOf('\r') >= 0 || text.indexOf('\n') >= 0) {
            text = text.replace('\r', ' ').replace('\n', ' ');
        }
        ByteBufUtil.writeUtf8(buf, text);
        crlf(buf);
    }

    /** Writes {@code value} in ASCII decimal; works on the negative magnitude so Long.MIN_VALUE needs no case. */
    static void writeDecimal(ByteBuf buf, long value) {
        int length = value < 0 ? 2 : 1;
        for (long rest = value < 0 ? value : -value; rest <= -10; rest /= 10) {
            length++;
        }
        buf.ensureWritable(length);
        int end = buf.writerIndex() + length;
        int at = end;
        long rest = value < 0 ? value : -value;
        do {
            buf.setByte(--at, (int) ('0' - rest % 10));
            rest /= 10;
        } while (rest != 0);
        if (value < 0) {
            buf.setByte(--at, '-');
        }
        buf.writerIndex(end);
    }

    private static boolean isResp3(int proto) {
        if (proto == RESP3) {
            return true;
        }
        if (proto == RESP2) {
            return false;
        }
        throw new IllegalArgumentException("protocol version " + proto + " is neither 2 nor 3");
    }

    private static byte[] ascii(String text) {
        return text.getBytes(StandardCharsets.US_ASCII);
    }
}
