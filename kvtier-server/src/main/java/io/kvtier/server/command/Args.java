package io.kvtier.server.command;

import io.kvtier.server.reply.CommandException;
import java.nio.charset.StandardCharsets;

/** Parsing of command arguments with Redis's exact error texts. */
public final class Args {
    private Args() {
    }

    /** Parses a signed 64-bit decimal exactly as Redis's string2ll (no spaces, no '+', no leading zeros). */
    public static long parseLong(byte[] b) {
        Long v = tryParseLong(b);
        if (v == null) {
            throw new CommandException(CommandException.NOT_INTEGER);
        }
        return v;
    }

    /**
     * Parses an argument Redis reads as a C int (getIntFromObjectOrReply): a non-integer is "not an integer", a
     * 64-bit integer outside the int range gets Redis's own range error.
     */
    public static int parseInt(byte[] b) {
        long v = parseLong(b);
        if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
            throw new CommandException("ERR value is out of range, value must between " + Integer.MIN_VALUE
                    + " and " + Integer.MAX_VALUE);
        }
        return (int) v;
    }

    public static Long tryParseLong(byte[] b) {
        int n = b.length;
        if (n == 0 || n > 20) {
            return null;
        }
        if (n == 1 && b[0] == '0') {
            return 0L;
        }
        int i = b[0] == '-' ? 1 : 0;
        if (i == n || b[i] < '1' || b[i] > '9') {
            return null; // no sign without digits, no '+', no leading zero, no "-0"
        }
        for (int j = i; j < n; j++) {
            if (b[j] < '0' || b[j] > '9') {
                return null;
            }
        }
        try {
            return Long.parseLong(new String(b, StandardCharsets.US_ASCII));
        } catch (NumberFormatException overflow) {
            return null;
        }
    }

    /**
     * An argument as Redis's {@code %s} quotes it in an error: its bytes up to the first NUL (a C string), one char
     * per byte, which RespWriter.error writes back byte for byte.
     */
    public static String quoted(byte[] b) {
        int end = 0;
        while (end < b.length && b[end] != 0) {
            end++;
        }
        return new String(b, 0, end, StandardCharsets.ISO_8859_1);
    }

    public static String str(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    /** Case-insensitive ASCII comparison with a lower-case literal. */
    public static boolean is(byte[] b, String lower) {
        if (b.length != lower.length()) {
            return false;
        }
        for (int i = 0; i < b.length; i++) {
            int c = b[i];
            if (c >= 'A' && c <= 'Z') {
                c += 32;
            }
            if (c != lower.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    public static String lower(byte[] b) {
        char[] out = new char[b.length];
        for (int i = 0; i < b.length; i++) {
            int c = b[i] & 0xff;
            out[i] = (char) (c >= 'A' && c <= 'Z' ? c + 32 : c);
        }
        return new String(out);
    }
}
