package io.kvtier.server.reply;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Error replies by code, the first word of the message ("ERR", "WRONGTYPE", "MOVED"), for INFO errorstats and
 * total_error_replies. Like Redis, it tracks at most {@link #MAX_CODES} codes: past that a new code is counted only
 * in the total, so that clients sending made-up errors through a proxied reply cannot grow the map.
 */
public final class ErrorStats {
    /** Redis's limit (ERROR_STATS_NUMBER). */
    static final int MAX_CODES = 128;
    private final ConcurrentHashMap<String, LongAdder> byCode = new ConcurrentHashMap<>();
    private final LongAdder total = new LongAdder();

    /** Counts one error reply; {@code message} starts with its code. Runs only for errors, so it may allocate. */
    public void record(String message) {
        total.increment();
        int space = message.indexOf(' ');
        String code = space < 0 ? message : message.substring(0, space);
        LongAdder n = byCode.get(code);
        if (n == null) {
            if (byCode.size() >= MAX_CODES) {
                return;
            }
            n = byCode.computeIfAbsent(code, c -> new LongAdder());
        }
        n.increment();
    }

    /** Error replies sent since start or CONFIG RESETSTAT. */
    public long total() {
        return total.sum();
    }

    /** Counts by code, sorted by code; codes with no error since the last reset are left out. */
    public Map<String, Long> byCode() {
        Map<String, Long> out = new TreeMap<>();
        byCode.forEach((code, n) -> {
            long sum = n.sum();
            if (sum > 0) {
                out.put(code, sum);
            }
        });
        return out;
    }

    public void reset() {
        byCode.clear();
        total.reset();
    }
}
