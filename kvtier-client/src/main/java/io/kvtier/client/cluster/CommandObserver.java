package io.kvtier.client.cluster;

/**
 * Told the outcome of every routed command (after redirects, retries or its timeout), for time series such as a
 * benchmark's failover timeline. Called on I/O and timer threads: implementations are thread-safe and quick.
 */
@FunctionalInterface
public interface CommandObserver {
    CommandObserver NONE = (slot, write, startNanos, endNanos, error) -> { };

    /**
     * @param slot       the key's slot
     * @param write      whether the command writes (SET, DEL)
     * @param startNanos {@link System#nanoTime} when the command was handed to the client
     * @param endNanos   when its outcome was known
     * @param error      null when the command succeeded (a miss is a success); else what kind of failure: the
     *                   error reply's first word ({@code TRYAGAIN}, {@code CLUSTERDOWN}, {@code MOVED} when not
     *                   followed, {@code ERR}...), {@code timeout}, {@code closed} (the connection closed with the
     *                   command in flight) or {@code unreachable} (the node refused or was unknown; not sent)
     */
    void completed(int slot, boolean write, long startNanos, long endNanos, String error);
}
