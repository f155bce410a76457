package io.kvtier.bench.load;

import io.kvtier.bench.report.Latency;
import io.kvtier.bench.report.OpResult;
import org.HdrHistogram.Histogram;

/**
 * Counters and the latency histogram of one operation on one lane. Thread-safe (synchronized): a lane's replies
 * complete on its connection's event loop, but a timeout or a task's first send may complete elsewhere; each lane
 * has its own instance, so the lock is uncontended. Lanes' statistics are merged once the phase is over.
 */
public final class OpStats {
    private final Histogram latency = Latency.newHistogram();
    private long count;
    private long bytes;
    private long hits;
    private long misses;
    private long errors;
    private long wrongBytes;
    private String firstError = "";

    public synchronized void recordLatency(long nanos) {
        Latency.recordNanos(latency, nanos);
    }

    /** A command that completed without hitting or missing (SET OK). */
    public synchronized void done(long valueBytes) {
        count++;
        bytes += valueBytes;
    }

    /** A lookup that found its value (GET with a value, EXISTS 1). */
    public synchronized void hit(long valueBytes, long wrong) {
        count++;
        hits++;
        bytes += valueBytes;
        wrongBytes += wrong;
    }

    /** A lookup that found nothing (GET nil, EXISTS 0). */
    public synchronized void miss() {
        count++;
        misses++;
    }

    public synchronized void error(String message) {
        count++;
        errors++;
        if (firstError.isEmpty()) {
            firstError = message;
        }
    }

    /** A whole multi-command request (LMCache): chunks served and not served, bytes moved, whether any failed. */
    public synchronized void request(long served, long notServed, long movedBytes, String error) {
        count++;
        hits += served;
        misses += notServed;
        bytes += movedBytes;
        if (!error.isEmpty()) {
            errors++;
            if (firstError.isEmpty()) {
                firstError = error;
            }
        }
    }

    synchronized void addTo(OpStats total) {
        synchronized (total) {
            total.latency.add(latency);
            total.count += count;
            total.bytes += bytes;
            total.hits += hits;
            total.misses += misses;
            total.errors += errors;
            total.wrongBytes += wrongBytes;
            if (total.firstError.isEmpty()) {
                total.firstError = firstError;
            }
        }
    }

    public synchronized OpResult toResult(String workload, long valueSize, String op, double seconds) {
        return new OpResult(workload, valueSize, op, count, seconds, bytes, hits, misses, errors, wrongBytes,
                firstError, Latency.summarize(latency), Latency.encode(latency));
    }
}
