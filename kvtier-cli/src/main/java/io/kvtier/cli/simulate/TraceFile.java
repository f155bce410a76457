package io.kvtier.cli.simulate;

import io.kvtier.common.Json;
import io.kvtier.kvcache.simulate.Trace;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.Reader;
import java.math.BigDecimal;
import java.util.Map;

/**
 * Reads a JSONL trace: one object per line, {@code {"session": "u1", "turn": 3, "prompt_tokens": 5120,
 * "new_tokens": 256}}, with optional {@code "time"} (seconds; all lines or none) and {@code "prefix"} +
 * {@code "prefix_tokens"} (a shared system prompt the session's prompts start with). Blank lines are skipped and
 * other fields ignored. Errors name the line. Stateless.
 */
final class TraceFile {
    private TraceFile() {
    }

    static Trace read(Reader in, String name) throws IOException {
        Trace.Builder trace = Trace.builder();
        BufferedReader lines = new BufferedReader(in);
        int number = 0;
        String line;
        while ((line = lines.readLine()) != null) {
            number++;
            if (line.isBlank()) {
                continue;
            }
            try {
                add(trace, line);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(name + " line " + number + ": " + e.getMessage(), e);
            }
        }
        try {
            return trace.build();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(name + ": " + e.getMessage(), e);
        }
    }

    private static void add(Trace.Builder trace, String line) {
        if (!(Json.parse(line) instanceof Map<?, ?> o)) {
            throw new IllegalArgumentException("expected a JSON object like {\"session\": \"u1\", \"turn\": 0, "
                    + "\"prompt_tokens\": 1024, \"new_tokens\": 256}");
        }
        Object session = required(o, "session");
        if (!(session instanceof String) && !(session instanceof BigDecimal)) {
            throw new IllegalArgumentException("\"session\" must be a string or a number");
        }
        String prefix = o.get("prefix") == null ? null : string(o, "prefix");
        long prefixTokens = prefix == null ? 0 : integer(o, "prefix_tokens");
        Double time = o.get("time") == null ? null : number(o, "time").doubleValue();
        trace.add(session instanceof BigDecimal n ? n.toPlainString() : (String) session, integer(o, "turn"), time,
                integer(o, "prompt_tokens"), integer(o, "new_tokens"), prefix, prefixTokens);
    }

    private static Object required(Map<?, ?> o, String field) {
        Object v = o.get(field);
        if (v == null) {
            throw new IllegalArgumentException("\"" + field + "\" is missing");
        }
        return v;
    }

    private static BigDecimal number(Map<?, ?> o, String field) {
        if (!(required(o, field) instanceof BigDecimal n)) {
            throw new IllegalArgumentException("\"" + field + "\" must be a number, not " + o.get(field));
        }
        return n;
    }

    private static long integer(Map<?, ?> o, String field) {
        BigDecimal n = number(o, field);
        try {
            return n.longValueExact();
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("\"" + field + "\" must be a whole number, not " + n);
        }
    }

    private static String string(Map<?, ?> o, String field) {
        if (!(required(o, field) instanceof String s)) {
            throw new IllegalArgumentException("\"" + field + "\" must be a string");
        }
        return s;
    }
}
