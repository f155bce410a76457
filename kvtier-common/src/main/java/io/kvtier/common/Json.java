package io.kvtier.common;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small JSON reader and writer for result files, on plain trees: {@code Map<String, ?>} (insertion-ordered),
 * {@code List<?>}, {@code String}, {@code Number}, {@code Boolean} and {@code null}. Numbers are read as
 * {@link BigDecimal}, so 64-bit seeds and byte counts survive a round trip; NaN and infinities are written as
 * {@code null}. Stateless and thread-safe.
 */
public final class Json {
    private Json() {
    }

    /** An object of name, value pairs ({@code "name", value, ...}), in the order given: for building trees to write. */
    public static Map<String, Object> object(Object... pairs) {
        if (pairs.length % 2 != 0) {
            throw new IllegalArgumentException("object() takes name, value pairs; got " + pairs.length + " arguments");
        }
        Map<String, Object> o = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            o.put((String) pairs[i], pairs[i + 1]);
        }
        return o;
    }

    public static String write(Object tree) {
        StringBuilder out = new StringBuilder();
        write(tree, out, 0);
        return out.append('\n').toString();
    }

    public static Object parse(String text) {
        Reader reader = new Reader(text);
        Object value = reader.value();
        reader.skipSpace();
        if (reader.pos != text.length()) {
            throw reader.error("trailing characters");
        }
        return value;
    }

    private static void write(Object value, StringBuilder out, int depth) {
        switch (value) {
            case null -> out.append("null");
            case Map<?, ?> map -> writeObject(map, out, depth);
            case List<?> list -> writeArray(list, out, depth);
            case String s -> quote(s, out);
            case Boolean b -> out.append(b);
            case Double d when d.isNaN() || d.isInfinite() -> out.append("null");
            case Float f when f.isNaN() || f.isInfinite() -> out.append("null");
            case Number n -> out.append(n);
            default -> throw new IllegalArgumentException("cannot write " + value.getClass().getName() + " as JSON");
        }
    }

    private static void writeObject(Map<?, ?> map, StringBuilder out, int depth) {
        out.append('{');
        String sep = "\n";
        for (Map.Entry<?, ?> e : map.entrySet()) {
            out.append(sep).append("  ".repeat(depth + 1));
            quote(e.getKey().toString(), out);
            out.append(": ");
            write(e.getValue(), out, depth + 1);
            sep = ",\n";
        }
        out.append(map.isEmpty() ? "" : "\n" + "  ".repeat(depth)).append('}');
    }

    private static void writeArray(List<?> list, StringBuilder out, int depth) {
        out.append('[');
        String sep = "\n";
        for (Object item : list) {
            out.append(sep).append("  ".repeat(depth + 1));
            write(item, out, depth + 1);
            sep = ",\n";
        }
        out.append(list.isEmpty() ? "" : "\n" + "  ".repeat(depth)).append(']');
    }

    /**
     * Appends {@code s} as a JSON string: quote, backslash and control characters escaped (the short escapes where
     * JSON has them, else a six-character escape), everything else as it is, as Python's json.dumps(ensure_ascii=False)
     * writes it.
     */
    public static void quote(String s, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    /** Recursive-descent parser over one text; not thread-safe, one per call. */
    private static final class Reader {
        private final String text;
        private int pos;

        Reader(String text) {
            this.text = text;
        }

        Object value() {
            skipSpace();
            if (pos >= text.length()) {
                throw error("unexpected end");
            }
            char c = text.charAt(pos);
            return switch (c) {
                case '{' -> object();
                case '[' -> array();
                case '"' -> string();
                case 't' -> literal("true", Boolean.TRUE);
                case 'f' -> literal("false", Boolean.FALSE);
                case 'n' -> literal("null", null);
                default -> number();
            };
        }

        private Map<String, Object> object() {
            Map<String, Object> map = new LinkedHashMap<>();
            pos++;
            skipSpace();
            if (peek() == '}') {
                pos++;
                return map;
            }
            while (true) {
                skipSpace();
                if (peek() != '"') {
                    throw error("expected a member name");
                }
                String name = string();
                skipSpace();
                expect(':');
                map.put(name, value());
                skipSpace();
                if (peek() == ',') {
                    pos++;
                } else {
                    expect('}');
                    return map;
                }
            }
        }

        private List<Object> array() {
            List<Object> list = new ArrayList<>();
            pos++;
            skipSpace();
            if (peek() == ']') {
                pos++;
                return list;
            }
            while (true) {
                list.add(value());
                skipSpace();
                if (peek() == ',') {
                    pos++;
                } else {
                    expect(']');
                    return list;
                }
            }
        }

        private String string() {
            StringBuilder sb = new StringBuilder();
            pos++;
            while (true) {
                if (pos >= text.length()) {
                    throw error("unterminated string");
                }
                char c = text.charAt(pos++);
                if (c == '"') {
                    return sb.toString();
                }
                if (c != '\\') {
                    sb.append(c);
                    continue;
                }
                char e = text.charAt(pos++);
                switch (e) {
                    case 'n' -> sb.append('\n');
                    case 'r' -> sb.append('\r');
                    case 't' -> sb.append('\t');
                    case 'b' -> sb.append('\b');
                    case 'f' -> sb.append('\f');
                    case 'u' -> {
                        sb.append((char) Integer.parseInt(text.substring(pos, pos + 4), 16));
                        pos += 4;
                    }
                    default -> sb.append(e);
                }
            }
        }

        private BigDecimal number() {
            int start = pos;
            while (pos < text.length() && "+-0123456789.eE".indexOf(text.charAt(pos)) >= 0) {
                pos++;
            }
            try {
                return new BigDecimal(text.substring(start, pos));
            } catch (NumberFormatException e) {
                throw error("expected a value");
            }
        }

        private Object literal(String word, Object value) {
            if (!text.startsWith(word, pos)) {
                throw error("expected " + word);
            }
            pos += word.length();
            return value;
        }

        private char peek() {
            return pos < text.length() ? text.charAt(pos) : '\0';
        }

        private void expect(char c) {
            if (peek() != c) {
                throw error("expected '" + c + "'");
            }
            pos++;
        }

        void skipSpace() {
            while (pos < text.length() && Character.isWhitespace(text.charAt(pos))) {
                pos++;
            }
        }

        IllegalArgumentException error(String what) {
            return new IllegalArgumentException("bad JSON at offset " + pos + ": " + what);
        }
    }
}
