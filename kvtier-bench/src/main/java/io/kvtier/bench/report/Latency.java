package io.kvtier.bench.report;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Base64;
import java.util.zip.DataFormatException;
import org.HdrHistogram.Histogram;

/**
 * Latency histograms: microseconds from 1 µs to 60 s at 3 significant digits, the figures reported from them (in
 * milliseconds) and their compact text form. Stateless; a {@link Histogram} itself is not thread-safe.
 *
 * <p>Values outside the range are clamped rather than dropped, so a 70 s stall still counts (as 60 s) and the
 * histogram's count always equals the number of recorded requests. Percentiles are HdrHistogram's "highest
 * equivalent value" of the bucket, so a reported p99 is never below the true one by more than 0.1%.
 */
public final class Latency {
    /** Smallest trackable latency, microseconds. */
    public static final long LOWEST_MICROS = 1;
    /** Largest trackable latency, microseconds (60 s); longer ones are recorded as this. */
    public static final long HIGHEST_MICROS = 60_000_000;
    /** Significant decimal digits kept. */
    public static final int DIGITS = 3;

    private Latency() {
    }

    public static Histogram newHistogram() {
        return new Histogram(LOWEST_MICROS, HIGHEST_MICROS, DIGITS);
    }

    /** Records a latency measured in nanoseconds, rounded to the nearest microsecond and clamped to the range. */
    public static void recordNanos(Histogram histogram, long nanos) {
        histogram.recordValue(toMicros(nanos));
    }

    static long toMicros(long nanos) {
        return Math.clamp((nanos + 500) / 1000, LOWEST_MICROS, HIGHEST_MICROS);
    }

    /** The reported figures; all NaN for an empty histogram (nothing succeeded, so there is no latency). */
    public static LatencySummary summarize(Histogram h) {
        if (h.getTotalCount() == 0) {
            return LatencySummary.EMPTY;
        }
        return new LatencySummary(ms(h.getValueAtPercentile(50)), ms(h.getValueAtPercentile(90)),
                ms(h.getValueAtPercentile(99)), ms(h.getValueAtPercentile(99.9)), ms(h.getMaxValue()),
                h.getMean() / 1000.0);
    }

    private static double ms(long micros) {
        return micros / 1000.0;
    }

    /** The histogram as Base64 of HdrHistogram's compressed V2 encoding (what {@code HistogramLogReader} reads). */
    public static String encode(Histogram h) {
        ByteBuffer buffer = ByteBuffer.allocate(h.getNeededByteBufferCapacity());
        int length = h.encodeIntoCompressedByteBuffer(buffer);
        return Base64.getEncoder().encodeToString(Arrays.copyOf(buffer.array(), length));
    }

    public static Histogram decode(String base64) {
        try {
            return Histogram.decodeFromCompressedByteBuffer(ByteBuffer.wrap(Base64.getDecoder().decode(base64)), 0);
        } catch (DataFormatException | IllegalArgumentException e) {
            throw new IllegalArgumentException("not an encoded HdrHistogram: " + e.getMessage(), e);
        }
    }
}
