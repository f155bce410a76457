package io.kvtier.resp;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;

/**
 * Splits an inline command line into arguments exactly as Redis's {@code sdssplitargs} does: blanks separate
 * arguments, "double quotes" understand {@code \n \r \t \b \a \xHH} and {@code \<any>}, 'single quotes' understand
 * only {@code \'}, and a closing quote must be followed by a blank or the end of the line. Like the C original it
 * reads the line as a C string, so a NUL byte ends it. Stateless.
 */
final class InlineSplitter {
    static final String UNBALANCED_QUOTES = "ERR Protocol error: unbalanced quotes in request";

    private static final byte[][] NO_ARGS = new byte[0][];

    private final byte[] line;
    private final int end;
    private int p;

    private InlineSplitter(byte[] line) {
        this.line = line;
        int nul = 0;
        while (nul < line.length && line[nul] != 0) {
            nul++;
        }
        this.end = nul;
    }

    /**
     * Returns the arguments of {@code line} (the line without its newline); none for a blank line.
     *
     * @throws RespException with {@link #UNBALANCED_QUOTES} when a quote is not closed or closed badly
     */
    static byte[][] split(byte[] line) {
        return new InlineSplitter(line).split();
    }

    private byte[][] split() {
        List<byte[]> args = new ArrayList<>();
        while (true) {
            while (p < end && isSpace(line[p])) {
                p++;
            }
            if (p >= end) {
                return args.isEmpty() ? NO_ARGS : args.toArray(NO_ARGS);
            }
            args.add(token());
        }
    }

    /** Reads one argument starting at {@code p}, leaving {@code p} just past it (a direct port of the C loop). */
    private byte[] token() {
        ByteArrayOutputStream current = new ByteArrayOutputStream();
        boolean inDouble = false;
        boolean inSingle = false;
        boolean done = false;
        while (!done) {
            int c = at(p);
            if (inDouble) {
                done = doubleQuoted(c, current);
            } else if (inSingle) {
                done = singleQuoted(c, current);
            } else {
                switch (c) {
                    case ' ', '\n', '\r', '\t', 0 -> done = true;
                    case '"' -> inDouble = true;
                    case '\'' -> inSingle = true;
                    default -> current.write(c);
                }
            }
            if (at(p) != 0) {
                p++;
            }
        }
        return current.toByteArray();
    }

    private boolean doubleQuoted(int c, ByteArrayOutputStream current) {
        if (c == '\\' && at(p + 1) == 'x' && isHex(at(p + 2)) && isHex(at(p + 3))) {
            current.write(Character.digit(at(p + 2), 16) * 16 + Character.digit(at(p + 3), 16));
            p += 3;
        } else if (c == '\\' && at(p + 1) != 0) {
            p++;
            current.write(unescape(at(p)));
        } else if (c == '"') {
            return closes();
        } else if (c == 0) {
            throw new RespException(UNBALANCED_QUOTES);
        } else {
            current.write(c);
        }
        return false;
    }

    private boolean singleQuoted(int c, ByteArrayOutputStream current) {
        if (c == '\\' && at(p + 1) == '\'') {
            p++;
            current.write('\'');
        } else if (c == '\'') {
            return closes();
        } else if (c == 0) {
            throw new RespException(UNBALANCED_QUOTES);
        } else {
            current.write(c);
        }
        return false;
    }

    /** A closing quote must be followed by a blank or nothing at all. */
    private boolean closes() {
        int next = at(p + 1);
        if (next != 0 && !isSpace(next)) {
            throw new RespException(UNBALANCED_QUOTES);
        }
        return true;
    }

    private int at(int i) {
        return i < end ? line[i] & 0xff : 0;
    }

    private static int unescape(int c) {
        return switch (c) {
            case 'n' -> '\n';
            case 'r' -> '\r';
            case 't' -> '\t';
            case 'b' -> '\b';
            case 'a' -> 7;
            default -> c;
        };
    }

    /** C's isspace in the "C" locale, which Redis keeps for LC_CTYPE. */
    private static boolean isSpace(int c) {
        return c == ' ' || (c >= '\t' && c <= '\r');
    }

    private static boolean isHex(int c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    }
}
