package io.kvtier.bench;

import io.kvtier.bench.load.Limit;
import io.kvtier.common.Durations;
import io.kvtier.common.Sizes;
import java.time.Duration;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Parses the text of flag values: byte sizes ({@code 1048576}, {@code 64k}, {@code 1m}, {@code 512MiB}, all binary
 * units: {@link Sizes}, as {@code kvtier server}'s flags), durations ({@code 500ms}, {@code 10s}, {@code 2m},
 * {@code 1h}; a bare number is seconds: {@link Durations}, every command's grammar) and warm-ups (a duration, or a
 * bare number of requests). Stateless; the nested converters plug the parsers into picocli.
 */
final class FlagValues {
    private FlagValues() {
    }

    static Duration duration(String text) {
        return Durations.parse(text);
    }

    /** A duration with a unit ({@code 2s}), or a bare number of requests ({@code 200}); {@code 0} is none. */
    static Limit warmUp(String text) {
        String t = text.trim();
        if (t.matches("\\d+")) {
            return new Limit.Requests(parseLong(t, text));
        }
        if (!t.matches("\\d+\\s*[A-Za-z]+")) {
            throw new IllegalArgumentException("'" + text + "' is neither a duration (2s) nor a request count (200)");
        }
        return new Limit.Timed(duration(t));
    }

    private static long parseLong(String digits, String text) {
        try {
            return Long.parseLong(digits);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + text + "' is too large");
        }
    }

    /** {@code SIZE} flags. */
    static final class SizeConverter implements ITypeConverter<Long> {
        @Override
        public Long convert(String value) {
            try {
                return Sizes.parse(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }

    /** {@code DURATION} flags. */
    static final class DurationConverter implements ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            try {
                return duration(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }

    /** {@code --warmup}. */
    static final class WarmUpConverter implements ITypeConverter<Limit> {
        @Override
        public Limit convert(String value) {
            try {
                return warmUp(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }
}
