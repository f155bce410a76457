package io.kvtier.common.chart;

import java.util.Map;
import java.util.SortedMap;

/**
 * Checks and conversions the charts share: every chart needs a series and every series a point, byte sizes go on a
 * log2 axis labelled in binary units, hit rates (0..1) are drawn as percent. Errors name the series and the value.
 * Stateless.
 */
public final class ChartData {
    private static final double LOG2 = Math.log(2);
    private static final String[] BINARY = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};

    private ChartData() {
    }

    /** "256 KiB", "1 MiB" at whole powers of two; nothing in between. */
    public static String binarySizeLabel(double log2Size) {
        long exponent = Math.round(log2Size);
        if (Math.abs(log2Size - exponent) > 1e-6 || exponent < 0 || exponent > 62) {
            return "";
        }
        int unit = (int) exponent / 10;
        return (1L << (exponent - unit * 10L)) + " " + BINARY[unit];
    }

    /** log2 of {@code size}, for an axis labelled by {@link #binarySizeLabel}. */
    public static double log2(String series, long size) {
        if (size < 1) {
            throw new IllegalArgumentException("system \"" + series + "\" has value size " + size
                    + "; sizes must be at least 1 byte");
        }
        return Math.log(size) / LOG2;
    }

    /** {@code rate} (0..1) as percent. */
    public static double percent(String series, double rate) {
        if (!(rate >= 0 && rate <= 1)) {
            throw new IllegalArgumentException("system \"" + series + "\" has hit rate " + rate
                    + "; hit rates are between 0 and 1");
        }
        return rate * 100;
    }

    /** Refuses a chart with nothing to plot. */
    public static void requireSeries(Map<String, ?> bySeries) {
        if (bySeries == null || bySeries.isEmpty()) {
            throw new IllegalArgumentException("a chart needs at least one system to plot");
        }
    }

    /** {@code points}, refused when there are none. */
    public static <K, V> SortedMap<K, V> requirePoints(String series, SortedMap<K, V> points) {
        if (points == null || points.isEmpty()) {
            throw new IllegalArgumentException("system \"" + series + "\" has no points to plot");
        }
        return points;
    }
}
