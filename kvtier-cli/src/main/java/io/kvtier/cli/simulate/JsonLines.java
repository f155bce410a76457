package io.kvtier.cli.simulate;

import io.kvtier.common.Json;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.Reader;
import java.math.BigDecimal;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The line loop the JSONL trace readers share: numbers the lines, skips blank ones, hands each line's object to the
 * format's reader and prefixes any error with the file's name and the line's number; and the field readers whose
 * messages name the field. Stateless.
 */
final class JsonLines {
    private JsonLines() {
    }

    /**
     * Parses each non-blank line of {@code in} as a JSON object and hands it to {@code each}.
     *
     * @param example an object of the format, for the message when a line is not an object
     * @throws IllegalArgumentException {@code "<name> line <n>: <what is wrong>"}
     */
    static void forEach(Reader in, String name, String example, Consumer<Map<?, ?>> each) throws IOException {
        BufferedReader lines = in instanceof BufferedReader b ? b : new BufferedReader(in);
        int number = 0;
        String line;
        while ((line = lines.readLine()) != null) {
            number++;
            if (line.isBlank()) {
                continue;
            }
            try {
                if (!(Json.parse(line) instanceof Map<?, ?> o)) {
                    throw new IllegalArgumentException("expected a JSON object like " + example);
                }
                each.accept(o);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(name + " line " + number + ": " + e.getMessage(), e);
            }
        }
    }

    /** A builder's result; its error (an empty trace) prefixed with the file's name. */
    static <T> T built(String name, Supplier<T> build) {
        try {
            return build.get();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(name + ": " + e.getMessage(), e);
        }
    }

    static Object required(Map<?, ?> o, String field) {
        Object v = o.get(field);
        if (v == null) {
            throw new IllegalArgumentException("\"" + field + "\" is missing");
        }
        return v;
    }

    static BigDecimal number(Map<?, ?> o, String field) {
        if (!(required(o, field) instanceof BigDecimal n)) {
            throw new IllegalArgumentException("\"" + field + "\" must be a number, not " + o.get(field));
        }
        return n;
    }

    static long integer(Map<?, ?> o, String field) {
        BigDecimal n = number(o, field);
        try {
            return n.longValueExact();
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("\"" + field + "\" must be a whole number, not " + n);
        }
    }

    static String string(Map<?, ?> o, String field) {
        if (!(required(o, field) instanceof String s)) {
            throw new IllegalArgumentException("\"" + field + "\" must be a string");
        }
        return s;
    }
}
