package io.kvtier.common;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses byte sizes: a number with an optional binary unit, case-insensitive — {@code 1048576}, {@code 64k},
 * {@code 64m}, {@code 2g}, {@code 1t}, {@code 512MiB}, {@code 512mb}, {@code 4GiB}. All units are powers of 1024
 * (as in Redis's config: there "mb" is also 1024*1024).
 */
public final class Sizes {
    private static final Pattern SIZE = Pattern.compile("(\\d+)\\s*([kmgt]?)(i?b)?");

    private Sizes() {
    }

    public static long parse(String text) {
        Matcher m = SIZE.matcher(text.trim().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new IllegalArgumentException("'" + text + "' is not a size (examples: 1048576, 64m, 2g, 512MiB)");
        }
        if (m.group(3) != null && m.group(2).isEmpty() && m.group(3).startsWith("i")) {
            throw new IllegalArgumentException("'" + text + "' is not a size (examples: 1048576, 64m, 2g, 512MiB)");
        }
        int shift = switch (m.group(2)) {
            case "k" -> 10;
            case "m" -> 20;
            case "g" -> 30;
            case "t" -> 40;
            default -> 0;
        };
        long n;
        try {
            n = Long.parseLong(m.group(1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + text + "' is too large");
        }
        if (n > (Long.MAX_VALUE >> shift)) {
            throw new IllegalArgumentException("'" + text + "' is too large");
        }
        return n << shift;
    }
}
