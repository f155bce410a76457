package io.kvtier.common;

import java.util.Locale;

/** Formats byte sizes and rates for people: {@code 256 KiB}, {@code 1 MiB}, {@code 1.5 GiB}. Stateless. */
public final class Units {
    private static final String[] BINARY = {"B", "KiB", "MiB", "GiB", "TiB"};

    private Units() {
    }

    /** Binary units; exact multiples print as integers ({@code 32 MiB}), others with one decimal. */
    public static String bytes(long n) {
        int unit = 0;
        double value = n;
        while (Math.abs(value) >= 1024 && unit < BINARY.length - 1) {
            value /= 1024;
            unit++;
        }
        if (value == Math.rint(value)) {
            return String.format(Locale.ROOT, "%d %s", (long) value, BINARY[unit]);
        }
        return String.format(Locale.ROOT, "%.1f %s", value, BINARY[unit]);
    }

    /** Decimal gigabytes (10^9), as throughput is usually quoted. */
    public static String gigabytes(double bytes) {
        return String.format(Locale.ROOT, "%.2f GB", bytes / 1e9);
    }
}
