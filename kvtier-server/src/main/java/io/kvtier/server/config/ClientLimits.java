package io.kvtier.server.config;

/**
 * Bounds on what one client and all clients together may hold or take while a request arrives, validated on
 * construction; the README's "Limits" section states each of them. The reservation caps are fixed shares of --memory
 * ({@link #CONNECTION_RESERVATION_SHARE}, {@link #TOTAL_RESERVATION_SHARE}).
 *
 * @param queryBufferLimit   most bytes one request may declare, all arguments together (Redis's
 *                           client-query-buffer-limit; --client-query-buffer-limit)
 * @param maxMemoryClients   most heap bytes the requests in progress of all clients may hold (Redis's
 *                           maxmemory-clients; --maxmemory-clients)
 * @param idleTimeoutSeconds a client idle this long is closed, 0 = never (Redis's timeout; --timeout)
 * @param readTimeoutSeconds a request in progress that delivers less than {@link #MIN_PROGRESS_BYTES} (or the rest of
 *                           itself) in this long is refused and its connection closed, 0 = never (--read-timeout)
 */
public record ClientLimits(long queryBufferLimit, long maxMemoryClients, int idleTimeoutSeconds,
                           int readTimeoutSeconds) {
    /** Redis's client-query-buffer-limit default. */
    public static final long DEFAULT_QUERY_BUFFER_LIMIT = 1L << 30;
    public static final int DEFAULT_READ_TIMEOUT_SECONDS = 30;
    /** What a request in progress must deliver per read timeout: 1 MiB, about 34 KiB/s at the default 30 s. */
    public static final long MIN_PROGRESS_BYTES = 1L << 20;
    /** Share of --memory that one connection's unfinished request may hold reserved; beyond it values spill to disk. */
    public static final double CONNECTION_RESERVATION_SHARE = 0.25;
    /** Share of --memory that the unfinished requests of all connections may hold reserved. */
    public static final double TOTAL_RESERVATION_SHARE = 0.5;

    public ClientLimits {
        if (queryBufferLimit < (1 << 20)) {
            throw new IllegalArgumentException("--client-query-buffer-limit " + queryBufferLimit + " is below 1 MiB");
        }
        long heap = Runtime.getRuntime().maxMemory();
        if (maxMemoryClients < (1 << 20) || maxMemoryClients > heap / 2) {
            throw new IllegalArgumentException("--maxmemory-clients " + maxMemoryClients + " is outside 1 MiB.."
                    + heap / 2 + " (half the JVM heap of " + heap + " bytes; set KVTIER_HEAP for a larger heap)");
        }
        if (idleTimeoutSeconds < 0 || readTimeoutSeconds < 0) {
            throw new IllegalArgumentException("--timeout " + idleTimeoutSeconds + " and --read-timeout "
                    + readTimeoutSeconds + " must be 0 (never) or more seconds");
        }
    }

    /**
     * Redis's 1 GiB query buffer limit, a quarter of the JVM heap (at most 512 MiB) for all requests in progress (the
     * rest holds the index), no idle timeout (as Redis) and a 30 s read timeout.
     */
    public static ClientLimits defaults() {
        return new ClientLimits(DEFAULT_QUERY_BUFFER_LIMIT, defaultMaxMemoryClients(), 0, DEFAULT_READ_TIMEOUT_SECONDS);
    }

    /**
     * A quarter of the JVM heap, at least 1 MiB and at most 512 MiB: the launcher's heap is the index budget plus a
     * fixed headroom of 768 MiB (ServerOptions.heapBytes), and requests in progress must fit in that headroom beside
     * the policy's ghosts and recovery's side maps, however large the index budget makes the heap.
     */
    public static long defaultMaxMemoryClients() {
        return Math.min(512L << 20, Math.max(1 << 20, Runtime.getRuntime().maxMemory() / 4));
    }
}
