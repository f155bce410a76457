package io.kvtier.bench.limits;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Just enough JSON for {@link MachineLimitsResult}: objects (nested allowed), strings, integral and decimal numbers,
 * booleans and null; no arrays. Parsing is a recursive descent over one string; not thread-safe, one instance per
 * parse.
 */
final class Json {
    private final String text;
    private int at;

    private Json(String text) {
        this.text = text;
    }

    /** Parses {@code text}, exactly one object; values are Map, String, Long, Double, Boolean or null. */
    static Map<String, Object> parseObject(String text) {
        Json json = new Json(text);
        Map<String, Object> object = json.object();
        json.skipSpace();
        if (json.at != text.length()) {
            throw json.error("trailing characters");
        }
        return object;
    }

    /** {@code value} as a JSON string literal. */
    static String quote(String value) {
        StringBuilder out = new StringBuilder(value.length() + 2).append('"');
        for (char c : value.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\t' -> out.append("\\t");
                default -> out.append(c < 0x20 ? String.format("\\u%04x", (int) c) : String.valueOf(c));
            }
        }
        return out.append('"').toString();
    }

    private Map<String, Object> object() {
        expect('{');
        Map<String, Object> object = new LinkedHashMap<>();
        if (peek() == '}') {
            at++;
            return object;
        }
        do {
            String key = string();
            expect(':');
            object.put(key, value());
        } while (consume(','));
        expect('}');
        return object;
    }

    private Object value() {
        char c = peek();
        if (c == '{') {
            return object();
        }
        if (c == '"') {
            return string();
        }
        for (String word : new String[] {"true", "false", "null"}) {
            if (text.startsWith(word, at)) {
                at += word.length();
                return word.equals("null") ? null : Boolean.valueOf(word);
            }
        }
        return number();
    }

    private Object number() {
        int start = at;
        while (at < text.length() && "+-.eE0123456789".indexOf(text.charAt(at)) >= 0) {
            at++;
        }
        String literal = text.substring(start, at);
        try {
            return literal.matches("-?\\d+") ? (Object) Long.parseLong(literal) : (Object) Double.parseDouble(literal);
        } catch (NumberFormatException e) {
            at = start;
            throw error("expected a value");
        }
    }

    private String string() {
        expect('"');
        StringBuilder out = new StringBuilder();
        while (at < text.length() && text.charAt(at) != '"') {
            char c = text.charAt(at++);
            if (c == '\\') {
                out.append(escape());
            } else {
                out.append(c);
            }
        }
        if (at == text.length()) {
            throw error("unterminated string");
        }
        at++;
        return out.toString();
    }

    private char escape() {
        if (at >= text.length()) {
            throw error("unterminated escape");
        }
        char c = text.charAt(at++);
        return switch (c) {
            case 'n' -> '\n';
            case 't' -> '\t';
            case 'r' -> '\r';
            case 'b' -> '\b';
            case 'f' -> '\f';
            case 'u' -> unicode();
            case '"', '\\', '/' -> c;
            default -> throw error("bad escape \\" + c);
        };
    }

    private char unicode() {
        if (at + 4 > text.length()) {
            throw error("short \\u escape");
        }
        try {
            char c = (char) Integer.parseInt(text, at, at + 4, 16);
            at += 4;
            return c;
        } catch (NumberFormatException e) {
            throw error("bad \\u escape");
        }
    }

    private char peek() {
        skipSpace();
        if (at >= text.length()) {
            throw error("unexpected end");
        }
        return text.charAt(at);
    }

    private boolean consume(char c) {
        if (peek() == c) {
            at++;
            return true;
        }
        return false;
    }

    private void expect(char c) {
        if (!consume(c)) {
            throw error("expected '" + c + "'");
        }
    }

    private void skipSpace() {
        while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
            at++;
        }
    }

    private IllegalArgumentException error(String what) {
        return new IllegalArgumentException("bad limits JSON at offset " + at + ": " + what);
    }
}
