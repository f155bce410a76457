package io.kvtier.resp;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/** Test data: random pipelines of well-formed commands with the arguments they must decode to, and corruptions. */
final class RespStreams {
    /** Request bytes (ISO-8859-1) and the commands they hold. */
    record Stream(String bytes, List<List<String>> commands) {
    }

    private RespStreams() {
    }

    static String multibulk(List<String> args) {
        StringBuilder out = new StringBuilder("*").append(args.size()).append("\r\n");
        for (String arg : args) {
            out.append('$').append(arg.length()).append("\r\n").append(arg).append("\r\n");
        }
        return out.toString();
    }

    /** Up to {@code maxCommands} commands, mixing multibulk (payloads up to {@code maxPayload}) and inline forms. */
    static Stream random(Random random, int maxCommands, int maxPayload) {
        StringBuilder bytes = new StringBuilder();
        List<List<String>> commands = new ArrayList<>();
        int n = 1 + random.nextInt(maxCommands);
        for (int c = 0; c < n; c++) {
            switch (random.nextInt(6)) {
                case 0 -> bytes.append(random.nextBoolean() ? "*0\r\n" : random.nextBoolean() ? "\r\n" : " \t\n");
                case 1, 2 -> {
                    List<String> args = new ArrayList<>();
                    StringBuilder line = new StringBuilder();
                    for (int a = 1 + random.nextInt(4); a > 0; a--) {
                        args.add(inlineArg(random, line));
                    }
                    bytes.append(line).append(random.nextBoolean() ? "\r\n" : "\n");
                    commands.add(args);
                }
                default -> {
                    List<String> args = new ArrayList<>();
                    for (int a = 1 + random.nextInt(5); a > 0; a--) {
                        args.add(payload(random, random.nextInt(4) == 0 ? maxPayload : 8));
                    }
                    bytes.append(multibulk(args));
                    commands.add(args);
                }
            }
        }
        return new Stream(bytes.toString(), commands);
    }

    /** Appends one inline argument, plain or quoted, to {@code line}, returning what it must decode to. */
    private static String inlineArg(Random random, StringBuilder line) {
        String word = Integer.toString(random.nextInt(100_000), 36);
        line.append(' ');
        return switch (random.nextInt(3)) {
            case 0 -> {
                line.append(word);
                yield word;
            }
            case 1 -> {
                line.append("\"").append(word).append(" \\x41\\n\\\"\"");
                yield word + " A\n\"";
            }
            default -> {
                line.append("'").append(word).append("\\'").append("'");
                yield word + "'";
            }
        };
    }

    /** Any bytes at all, CR and LF and '$' included. */
    private static String payload(Random random, int maxLength) {
        char[] chars = new char[random.nextInt(maxLength + 1)];
        for (int i = 0; i < chars.length; i++) {
            chars[i] = (char) (random.nextInt(8) == 0 ? "\r\n$*\"' ".charAt(random.nextInt(7)) : random.nextInt(256));
        }
        return new String(chars);
    }

    /** Flips, inserts or deletes a few bytes of {@code bytes}, or cuts it short. */
    static String corrupt(Random random, String bytes) {
        StringBuilder out = new StringBuilder(bytes);
        for (int k = 1 + random.nextInt(3); k > 0 && !out.isEmpty(); k--) {
            int at = random.nextInt(out.length());
            char c = "\r\n$*-\"'\\0x 9".charAt(random.nextInt(12));
            switch (random.nextInt(4)) {
                case 0 -> out.setCharAt(at, c);
                case 1 -> out.insert(at, c);
                case 2 -> out.deleteCharAt(at);
                default -> out.setLength(at);
            }
        }
        return out.toString();
    }
}
