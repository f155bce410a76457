package io.kvtier.it;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads exactly one reply, RESP2 or RESP3, from a stream and keeps its bytes, descending into arrays, maps, sets,
 * pushes and attributes; it never reads past the reply's last CRLF. Not thread-safe.
 */
final class RawReplyReader {
    private final InputStream in;

    RawReplyReader(InputStream in) {
        this.in = in;
    }

    RawReply read() throws IOException {
        int type = in.read();
        if (type < 0) {
            throw new EOFException("connection closed before a reply");
        }
        ByteArrayOutputStream raw = new ByteArrayOutputStream();
        raw.write(type);
        byte[] line = readLine();
        raw.writeBytes(line);
        raw.writeBytes(new byte[] {'\r', '\n'});
        return switch (type) {
            case '+', '-', ':', '_', '#', ',', '(' -> RawReply.leaf(raw.toByteArray());
            case '$', '=', '!' -> {
                long length = number(line);
                if (length >= 0) {
                    raw.writeBytes(readPayload(length));
                }
                yield RawReply.leaf(raw.toByteArray());
            }
            case '*', '~', '>' -> aggregate((byte) type, raw, number(line));
            case '%' -> aggregate((byte) type, raw, 2 * number(line));
            case '|' -> {
                // An attribute map belongs to the reply that follows it: read both as one.
                RawReply attributes = aggregate((byte) type, raw, 2 * number(line));
                RawReply reply = read();
                ByteArrayOutputStream both = new ByteArrayOutputStream();
                both.writeBytes(attributes.raw());
                both.writeBytes(reply.raw());
                yield new RawReply(reply.type(), both.toByteArray(), reply.children());
            }
            default -> throw new IOException("unexpected reply type byte 0x" + Integer.toHexString(type)
                    + " followed by \"" + new String(line, StandardCharsets.ISO_8859_1) + "\"");
        };
    }

    private RawReply aggregate(byte type, ByteArrayOutputStream raw, long count) throws IOException {
        List<RawReply> children = new ArrayList<>();
        for (long i = 0; i < count; i++) {
            RawReply child = read();
            raw.writeBytes(child.raw());
            children.add(child);
        }
        return new RawReply(type, raw.toByteArray(), children);
    }

    /** The bytes up to (not including) the next CRLF, which is consumed. */
    private byte[] readLine() throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        while (true) {
            int b = in.read();
            if (b < 0) {
                throw new EOFException("connection closed inside a reply line");
            }
            if (b == '\r') {
                int next = in.read();
                if (next == '\n') {
                    return line.toByteArray();
                }
                throw new IOException("CR not followed by LF in a reply line");
            }
            line.write(b);
        }
    }

    /** {@code length} payload bytes and the CRLF after them. */
    private byte[] readPayload(long length) throws IOException {
        byte[] payload = in.readNBytes(Math.toIntExact(length + 2));
        if (payload.length != length + 2) {
            throw new EOFException("connection closed inside a " + length + "-byte payload");
        }
        if (payload[(int) length] != '\r' || payload[(int) length + 1] != '\n') {
            throw new IOException("payload of " + length + " bytes not followed by CRLF");
        }
        return payload;
    }

    private static long number(byte[] line) throws IOException {
        try {
            return Long.parseLong(new String(line, StandardCharsets.US_ASCII));
        } catch (NumberFormatException e) {
            throw new IOException("bad length line \"" + new String(line, StandardCharsets.ISO_8859_1) + "\"");
        }
    }
}
