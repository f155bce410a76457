package io.kvtier.kvcache.simulate;

import java.util.Arrays;

/**
 * The order a trace's requests are served in: by arrival time when the trace has times (ties keep input order),
 * else input order; times are given on every request or on none. Not thread-safe; owned by a trace's builder.
 */
final class ServingOrder {
    private final String field;
    private double[] time = new double[64];
    private int size;
    private Boolean timed;

    /** @param field the time's name in the trace, for messages ({@code time}, {@code timestamp}) */
    ServingOrder(String field) {
        this.field = field;
    }

    /** Checks a request's time (seconds, or {@code null}) against the earlier requests', before it is added. */
    void check(Double t) {
        if (timed == null) {
            timed = t != null;
        } else if (timed != (t != null)) {
            throw new IllegalArgumentException(timed ? field + " is missing; earlier requests have one, so every "
                    + "request needs one" : field + " is given, but earlier requests have none: give all or none");
        }
        if (t != null && !(t >= 0 && Double.isFinite(t))) {
            throw new IllegalArgumentException(field + " " + t + " must be a finite number of seconds >= 0");
        }
    }

    /** Appends a checked request's time. */
    void add(Double t) {
        if (size == time.length) {
            time = Arrays.copyOf(time, size * 2);
        }
        time[size++] = t == null ? 0 : t;
    }

    /** The times of the requests at {@code served} (input indexes), in seconds; {@code null} for a trace without. */
    double[] times(int[] served) {
        if (!Boolean.TRUE.equals(timed)) {
            return null;
        }
        double[] t = new double[served.length];
        for (int i = 0; i < served.length; i++) {
            t[i] = time[served[i]];
        }
        return t;
    }

    /** The input indexes of the requests added so far, in serving order. */
    int[] order() {
        Integer[] order = new Integer[size];
        for (int i = 0; i < size; i++) {
            order[i] = i;
        }
        if (Boolean.TRUE.equals(timed)) {
            Arrays.sort(order, (a, b) -> Double.compare(time[a], time[b])); // stable: ties keep input order
        }
        int[] unboxed = new int[size];
        for (int i = 0; i < size; i++) {
            unboxed[i] = order[i];
        }
        return unboxed;
    }
}
