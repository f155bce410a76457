package io.kvtier.bench.report;

import java.util.Objects;

/**
 * The measured figures of one operation in one phase of a workload, e.g. ({@code setget}, 1 MiB, {@code GET}).
 * Immutable.
 *
 * @param workload   workload name ({@code setget}, {@code lmcache}, {@code overflow})
 * @param valueSize  value size in bytes (for {@code lmcache}: the chunk's kv_bytes size)
 * @param op         operation, e.g. {@code SET}, {@code GET kv_bytes}, or {@code request} for a whole LMCache request
 * @param count      completed operations, including misses and errors
 * @param seconds    wall-clock length of the phase the operation ran in
 * @param bytes      value bytes moved: sent for SET, received for GET (for {@code request}: both)
 * @param hits       GETs answered with a value, EXISTS answered 1 (for {@code request}: chunks served)
 * @param misses     GETs answered nil, EXISTS answered 0 (for {@code request}: chunks needed but not served)
 * @param errors     error replies, timeouts and closed connections
 * @param wrongBytes bytes of GET replies that differ from what was stored (length differences included)
 * @param firstError the first error seen, empty when there was none
 * @param latencyMs  latency figures of the successful operations (misses included, errors not)
 * @param histogram  the same latencies, microseconds, as {@link Latency#encode}; empty when not kept
 */
public record OpResult(String workload, long valueSize, String op, long count, double seconds, long bytes,
        long hits, long misses, long errors, long wrongBytes, String firstError, LatencySummary latencyMs,
        String histogram) {

    public OpResult {
        Objects.requireNonNull(workload, "workload");
        Objects.requireNonNull(op, "op");
        Objects.requireNonNull(firstError, "firstError");
        Objects.requireNonNull(latencyMs, "latencyMs");
        Objects.requireNonNull(histogram, "histogram");
    }

    public double opsPerSec() {
        return seconds > 0 ? count / seconds : 0;
    }

    /** Megabytes (10^6 bytes) per second, as redis-benchmark and BENCHMARKS.md count them. */
    public double mbPerSec() {
        return seconds > 0 ? bytes / seconds / 1e6 : 0;
    }

    /** hits / (hits + misses), or NaN for operations that neither hit nor miss (SET). */
    public double hitRate() {
        long lookups = hits + misses;
        return lookups == 0 ? Double.NaN : (double) hits / lookups;
    }

    public boolean failed() {
        return errors > 0 || wrongBytes > 0;
    }
}
