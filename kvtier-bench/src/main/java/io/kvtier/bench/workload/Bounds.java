package io.kvtier.bench.workload;

import io.kvtier.common.Units;

/**
 * Range checks for options, with messages that name the flag, the value and the limit:
 * {@code "--connections 0 is below the minimum 1"}. Stateless.
 */
public final class Bounds {
    private Bounds() {
    }

    public static long check(String flag, long value, long min, long max) {
        if (value < min) {
            throw new IllegalArgumentException(flag + " " + value + " is below the minimum " + min);
        }
        if (value > max) {
            throw new IllegalArgumentException(flag + " " + value + " is above the maximum " + max);
        }
        return value;
    }

    /** As {@link #check} for byte sizes, which the messages print in binary units. */
    public static long checkBytes(String flag, long value, long min, long max) {
        if (value < min) {
            throw new IllegalArgumentException(flag + " " + Units.bytes(value) + " is below the minimum "
                    + Units.bytes(min));
        }
        if (value > max) {
            throw new IllegalArgumentException(flag + " " + Units.bytes(value) + " is above the maximum "
                    + Units.bytes(max));
        }
        return value;
    }

    public static double check(String flag, double value, double min, double max) {
        if (!(value >= min)) {
            throw new IllegalArgumentException(flag + " " + value + " is below the minimum " + min);
        }
        if (value > max) {
            throw new IllegalArgumentException(flag + " " + value + " is above the maximum " + max);
        }
        return value;
    }
}
