package io.kvtier.common;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses durations, one grammar for every flag of every command: a whole number with an optional unit, {@code ms},
 * {@code s}, {@code m} or {@code h}, case-insensitive; a bare number is seconds (as Redis's {@code timeout}) — so
 * {@code 500ms}, {@code 2s}, {@code 2}, {@code 5m}, {@code 1h}.
 */
public final class Durations {
    private static final Pattern DURATION = Pattern.compile("(\\d+)\\s*(ms|s|m|h)?");
    private static final String EXAMPLES = " (examples: 500ms, 2s, 5m, 1h; a bare number is seconds)";

    private Durations() {
    }

    /**
     * The duration {@code text} says.
     *
     * @throws IllegalArgumentException naming the text and the grammar, if it is not a duration or is too large
     */
    public static Duration parse(String text) {
        Matcher m = DURATION.matcher(text.trim().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new IllegalArgumentException("'" + text + "' is not a duration" + EXAMPLES);
        }
        try {
            long n = Long.parseLong(m.group(1));
            return switch (m.group(2) == null ? "s" : m.group(2)) {
                case "ms" -> Duration.ofMillis(n);
                case "m" -> Duration.ofMinutes(n);
                case "h" -> Duration.ofHours(n);
                default -> Duration.ofSeconds(n);
            };
        } catch (NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException("'" + text + "' is too large a duration");
        }
    }
}
