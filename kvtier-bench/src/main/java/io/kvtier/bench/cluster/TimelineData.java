package io.kvtier.bench.cluster;

import java.util.Arrays;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * The failover run's counts per time bucket, as columns indexed by bucket; the figures the summary and the chart
 * need are computed here. Immutable (the arrays are copies and never handed out).
 *
 * @param bucketNanos        bucket length
 * @param columns            one array per column constant below, all of the same length
 * @param firstVictimOkNanos when (since time 0) the first command sent after the kill succeeded on a key the killed
 *                           node was primary of; -1 when none did
 * @param errorKinds         errors of the whole timeline by kind (TRYAGAIN, CLUSTERDOWN, timeout, closed,
 *                           unreachable...), sorted by kind
 */
public record TimelineData(long bucketNanos, long[][] columns, long firstVictimOkNanos, Map<String, Long> errorKinds) {
    static final int READS_OK = 0;
    static final int WRITES_OK = 1;
    static final int READ_ERRORS = 2;
    static final int WRITE_ERRORS = 3;
    static final int VICTIM_OK = 4;
    static final int MAX_LATENCY_NANOS = 5;
    static final int LAST_ERROR_NANOS = 6;
    static final int COLUMNS = 7;

    public TimelineData {
        if (bucketNanos < 1 || columns.length != COLUMNS) {
            throw new IllegalArgumentException("need a positive bucket and " + COLUMNS + " columns");
        }
        long[][] copy = new long[COLUMNS][];
        for (int c = 0; c < COLUMNS; c++) {
            copy[c] = columns[c].clone();
            if (copy[c].length != columns[0].length) {
                throw new IllegalArgumentException("column " + c + " has " + copy[c].length + " buckets, not "
                        + columns[0].length);
            }
        }
        columns = copy;
        errorKinds = Collections.unmodifiableMap(new TreeMap<>(errorKinds));
    }

    int buckets() {
        return columns[0].length;
    }

    long get(int column, int bucket) {
        return columns[column][bucket];
    }

    double bucketSeconds() {
        return bucketNanos / 1e9;
    }

    /** Start of bucket {@code b}, seconds. */
    double startSeconds(int b) {
        return b * bucketSeconds();
    }

    long ok(int b) {
        return get(READS_OK, b) + get(WRITES_OK, b);
    }

    long errors(int b) {
        return get(READ_ERRORS, b) + get(WRITE_ERRORS, b);
    }

    double perSecond(long count) {
        return count / bucketSeconds();
    }

    long total(int column) {
        return Arrays.stream(columns[column]).sum();
    }

    long totalErrors() {
        return total(READ_ERRORS) + total(WRITE_ERRORS);
    }

    /** Errors of the buckets that start in [from, to) seconds. */
    long errorsBetween(double from, double to) {
        long n = 0;
        for (int b = first(from); b < buckets() && startSeconds(b) < to; b++) {
            n += errors(b);
        }
        return n;
    }

    /** When the last error in [from, to) seconds happened (by completion), or NaN when there was none. */
    double lastErrorBetween(double from, double to) {
        double last = Double.NaN;
        for (int b = first(from); b < buckets() && startSeconds(b) < to; b++) {
            if (errors(b) > 0) {
                last = get(LAST_ERROR_NANOS, b) / 1e9;
            }
        }
        return last;
    }

    /** Mean successful ops/s over the buckets that start in [from, to) seconds; NaN for an empty range. */
    double meanOpsPerSecond(double from, double to) {
        long n = 0;
        int count = 0;
        for (int b = first(from); b < buckets() && startSeconds(b) < to; b++) {
            n += ok(b);
            count++;
        }
        return count == 0 ? Double.NaN : n / (count * bucketSeconds());
    }

    /** Longest command of the whole run (successful or not), milliseconds. */
    double maxLatencyMillis() {
        return Arrays.stream(columns[MAX_LATENCY_NANOS]).max().orElse(0) / 1e6;
    }

    private int first(double fromSeconds) {
        return (int) Math.max(0, Math.ceil(fromSeconds / bucketSeconds() - 1e-9));
    }
}
