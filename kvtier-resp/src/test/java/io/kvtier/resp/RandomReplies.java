package io.kvtier.resp;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/** Test data: random reply streams of every RESP2/RESP3 type, nested, with the renderings they must decode to. */
final class RandomReplies {
    /** Reply bytes (ISO-8859-1) and their renderings by {@link RenderedReplies}. */
    record Stream(String bytes, List<String> replies) {
    }

    private static final String AGGREGATES = "*%~>";

    private RandomReplies() {
    }

    static Stream stream(Random random, int maxReplies, int maxDepth) {
        StringBuilder bytes = new StringBuilder();
        List<String> replies = new ArrayList<>();
        for (int n = 1 + random.nextInt(maxReplies); n > 0; n--) {
            replies.add(reply(random, bytes, maxDepth));
        }
        return new Stream(bytes.toString(), replies);
    }

    /** Appends one reply to {@code out} and returns its rendering. */
    static String reply(Random random, StringBuilder out, int depth) {
        if (random.nextInt(8) == 0) {
            // A RESP3 attribute before the reply: skipped by the decoder.
            out.append("|1\r\n+key\r\n");
            reply(random, out, 0);
        }
        int kind = random.nextInt(depth > 0 ? 14 : 10);
        switch (kind) {
            case 0 -> {
                String text = word(random);
                out.append('+').append(text).append("\r\n");
                return "+" + text;
            }
            case 1 -> {
                String text = "ERR " + word(random);
                out.append('-').append(text).append("\r\n");
                return "-" + text;
            }
            case 2 -> {
                long value = random.nextLong() >> random.nextInt(64);
                out.append(':').append(value).append("\r\n");
                return ":" + value;
            }
            case 3, 4 -> {
                String payload = payload(random);
                out.append('$').append(payload.length()).append("\r\n").append(payload).append("\r\n");
                return "$" + payload;
            }
            case 5 -> {
                out.append(random.nextBoolean() ? "$-1\r\n" : random.nextBoolean() ? "*-1\r\n" : "_\r\n");
                return "_";
            }
            case 6 -> {
                String text = random.nextBoolean() ? "t" : "f";
                out.append('#').append(text).append("\r\n");
                return "#" + text;
            }
            case 7 -> {
                String text = random.nextBoolean() ? Double.toString(random.nextGaussian()) : "-inf";
                out.append(',').append(text).append("\r\n");
                return "," + text;
            }
            case 8 -> {
                String text = "txt:" + word(random);
                out.append('=').append(text.length()).append("\r\n").append(text).append("\r\n");
                return "=" + text;
            }
            case 9 -> {
                String text = random.nextBoolean() ? "3492890328409238509324850943850943825024385" : "-1";
                out.append('(').append(text).append("\r\n");
                return "(" + text;
            }
            default -> {
                return aggregate(random, out, depth);
            }
        }
    }

    private static String aggregate(Random random, StringBuilder out, int depth) {
        char type = AGGREGATES.charAt(random.nextInt(AGGREGATES.length()));
        int count = random.nextInt(4);
        out.append(type).append(count).append("\r\n");
        List<String> elements = new ArrayList<>();
        for (int i = 0; i < (type == '%' ? 2 * count : count); i++) {
            elements.add(reply(random, out, depth - 1));
        }
        return type + elements.toString();
    }

    private static String word(Random random) {
        return Long.toString(random.nextLong() & Long.MAX_VALUE, 36);
    }

    /** Any bytes at all, CR, LF and type bytes included. */
    private static String payload(Random random) {
        char[] chars = new char[random.nextInt(random.nextInt(8) == 0 ? 300 : 12)];
        for (int i = 0; i < chars.length; i++) {
            chars[i] = (char) (random.nextInt(6) == 0 ? "\r\n$*%".charAt(random.nextInt(5)) : random.nextInt(256));
        }
        return new String(chars);
    }
}
