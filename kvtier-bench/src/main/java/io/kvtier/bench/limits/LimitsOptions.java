package io.kvtier.bench.limits;

import java.time.Duration;

/**
 * How long each limit is measured and how large the disk probe's scratch file may grow. The scratch file is shrunk
 * when the disk lacks room; the sequential write also stops at {@code measureTime}, whichever comes first.
 */
public record LimitsOptions(long fileBytes, Duration measureTime) {
    public static final long MIN_FILE = 16L << 20;
    public static final Duration MIN_MEASURE = Duration.ofMillis(50);
    public static final Duration MAX_MEASURE = Duration.ofSeconds(60);
    /** 1 GiB and 3 s per measurement: the whole run takes about 14 s. */
    public static final LimitsOptions DEFAULTS = new LimitsOptions(1L << 30, Duration.ofSeconds(3));

    public LimitsOptions {
        if (fileBytes < MIN_FILE) {
            throw new IllegalArgumentException("scratch file size " + fileBytes + " is below the minimum " + MIN_FILE);
        }
        if (measureTime == null || measureTime.compareTo(MIN_MEASURE) < 0 || measureTime.compareTo(MAX_MEASURE) > 0) {
            throw new IllegalArgumentException("measure time " + measureTime + " must be between " + MIN_MEASURE
                    + " and " + MAX_MEASURE);
        }
    }
}
