package io.kvtier.it;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A command script: one command per line, arguments separated by blanks, {@code #} starting a comment line. An
 * argument in double quotes may hold blanks and the escapes {@code \" \\ \r \n \t \xHH}, so values can be binary.
 */
final class CommandScript {
    /** One command of the script, with its line number and text for reports. */
    record Line(int number, String text, List<byte[]> args) {
        /** The command name in lower case. */
        String name() {
            return new String(args.get(0), StandardCharsets.UTF_8).toLowerCase(Locale.ROOT);
        }

        /** Argument {@code i} in lower case, or "" if there is none. */
        String lowerArg(int i) {
            return i < args.size() ? new String(args.get(i), StandardCharsets.UTF_8).toLowerCase(Locale.ROOT) : "";
        }
    }

    private CommandScript() {
    }

    static List<Line> load(String resource) throws IOException {
        try (InputStream in = CommandScript.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IOException("no resource " + resource);
            }
            return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        }
    }

    static List<Line> parse(String script) {
        List<Line> lines = new ArrayList<>();
        String[] texts = script.split("\n", -1);
        for (int i = 0; i < texts.length; i++) {
            String text = texts[i].strip();
            if (text.isEmpty() || text.startsWith("#")) {
                continue;
            }
            lines.add(new Line(i + 1, text, tokens(text, i + 1)));
        }
        return lines;
    }

    private static List<byte[]> tokens(String text, int lineNumber) {
        List<byte[]> args = new ArrayList<>();
        int i = 0;
        while (i < text.length()) {
            char c = text.charAt(i);
            if (Character.isWhitespace(c)) {
                i++;
            } else if (c == '"') {
                ByteArrayOutputStream arg = new ByteArrayOutputStream();
                i = quoted(text, i + 1, arg, lineNumber);
                args.add(arg.toByteArray());
            } else {
                int end = i;
                while (end < text.length() && !Character.isWhitespace(text.charAt(end))) {
                    end++;
                }
                args.add(text.substring(i, end).getBytes(StandardCharsets.UTF_8));
                i = end;
            }
        }
        return args;
    }

    /** Reads a quoted argument starting after its opening quote; returns the index after the closing quote. */
    private static int quoted(String text, int i, ByteArrayOutputStream out, int lineNumber) {
        while (i < text.length()) {
            char c = text.charAt(i);
            if (c == '"') {
                if (i + 1 < text.length() && !Character.isWhitespace(text.charAt(i + 1))) {
                    throw new IllegalArgumentException("line " + lineNumber + ": no blank after a closing quote");
                }
                return i + 1;
            }
            if (c != '\\') {
                int codePoint = text.codePointAt(i);
                out.writeBytes(Character.toString(codePoint).getBytes(StandardCharsets.UTF_8));
                i += Character.charCount(codePoint);
                continue;
            }
            if (i + 1 >= text.length()) {
                break;
            }
            char e = text.charAt(i + 1);
            switch (e) {
                case 'r' -> out.write('\r');
                case 'n' -> out.write('\n');
                case 't' -> out.write('\t');
                case '"', '\\' -> out.write(e);
                case 'x' -> {
                    out.write(Integer.parseInt(text.substring(i + 2, i + 4), 16));
                    i += 2;
                }
                default -> throw new IllegalArgumentException("line " + lineNumber + ": unknown escape \\" + e);
            }
            i += 2;
        }
        throw new IllegalArgumentException("line " + lineNumber + ": unterminated quote");
    }
}
