package io.kvtier.it;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * One RESP2/RESP3 reply exactly as it came off the wire: its type byte, all of its bytes (header, payload and
 * nested replies), and for aggregates the nested replies. Immutable.
 */
record RawReply(byte type, byte[] raw, List<RawReply> children) {

    static RawReply leaf(byte[] raw) {
        return new RawReply(raw[0], raw, List.of());
    }

    boolean isError() {
        return type == '-' || type == '!';
    }

    /** The value of an integer reply ({@code :n}). */
    long integer() {
        if (type != ':') {
            throw new IllegalStateException("not an integer reply: " + escaped());
        }
        String text = new String(raw, 1, raw.length - 3, StandardCharsets.US_ASCII);
        return Long.parseLong(text);
    }

    /** The payload of a bulk string ({@code $n}); null for the RESP2 null bulk. */
    byte[] bulk() {
        if (type != '$') {
            throw new IllegalStateException("not a bulk reply: " + escaped());
        }
        int headerEnd = indexOfCrlf(raw) + 2;
        int length = Integer.parseInt(new String(raw, 1, headerEnd - 3, StandardCharsets.US_ASCII));
        if (length < 0) {
            return null;
        }
        byte[] out = new byte[length];
        System.arraycopy(raw, headerEnd, out, 0, length);
        return out;
    }

    /** The header line (type byte through CRLF). */
    byte[] header() {
        byte[] h = new byte[indexOfCrlf(raw) + 2];
        System.arraycopy(raw, 0, h, 0, h.length);
        return h;
    }

    /** This aggregate with its elements in byte order (for KEYS, whose order is unspecified). */
    RawReply sorted() {
        List<RawReply> elements = children.stream()
                .sorted(Comparator.comparing(RawReply::raw, Arrays::compare))
                .toList();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(header());
        elements.forEach(e -> out.writeBytes(e.raw));
        return new RawReply(type, out.toByteArray(), elements);
    }

    /** The raw bytes as one printable line: {@code \r \n \\ \xHH} escapes, so equal text means equal bytes. */
    String escaped() {
        StringBuilder s = new StringBuilder(raw.length + 16);
        for (byte b : raw) {
            int c = b & 0xff;
            switch (c) {
                case '\r' -> s.append("\\r");
                case '\n' -> s.append("\\n");
                case '\\' -> s.append("\\\\");
                default -> {
                    if (c >= 0x20 && c < 0x7f) {
                        s.append((char) c);
                    } else {
                        s.append(String.format("\\x%02x", c));
                    }
                }
            }
        }
        return s.toString();
    }

    private static int indexOfCrlf(byte[] b) {
        for (int i = 0; i + 1 < b.length; i++) {
            if (b[i] == '\r' && b[i + 1] == '\n') {
                return i;
            }
        }
        throw new IllegalStateException("no CRLF in reply");
    }

    /** The text of a simple string, error or bulk reply. */
    static String text(RawReply reply) {
        if (reply.type() == '$') {
            return new String(reply.bulk(), StandardCharsets.UTF_8);
        }
        return new String(reply.raw(), 1, reply.raw().length - 3, StandardCharsets.UTF_8);
    }

    /** A map reply, or a RESP2 flat array of name, value pairs, by name in order. */
    static java.util.Map<String, RawReply> fields(RawReply map) {
        java.util.Map<String, RawReply> out = new java.util.LinkedHashMap<>();
        List<RawReply> c = map.children();
        for (int i = 0; i + 1 < c.size(); i += 2) {
            out.put(text(c.get(i)), c.get(i + 1));
        }
        return out;
    }
}
