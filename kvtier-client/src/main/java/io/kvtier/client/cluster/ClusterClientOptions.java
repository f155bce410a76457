package io.kvtier.client.cluster;

import io.kvtier.client.HostPort;
import java.time.Duration;
import java.util.Objects;

/**
 * How a {@link ClusterClient} reaches a cluster. Immutable.
 *
 * @param entry       the node first asked for CLUSTER SLOTS
 * @param password    AUTH password, or null
 * @param connections connections in all, spread over the primaries
 * @param timeout     longest a command may take, redirects and reconnects included
 * @param mode        route by slot, or send everything to the entry node, which proxies
 */
public record ClusterClientOptions(HostPort entry, String password, int connections, Duration timeout, Mode mode) {
    /** Where commands go. */
    public enum Mode {
        /** To the key's primary, as a cluster client: connections are cluster-aware and follow {@code -MOVED}. */
        SLOTS,
        /** All to the entry node on cluster-unaware connections: the node forwards (kvtier's proxy). */
        PROXY
    }

    public ClusterClientOptions {
        Objects.requireNonNull(entry, "entry");
        Objects.requireNonNull(timeout, "timeout");
        Objects.requireNonNull(mode, "mode");
        if (connections < 1) {
            throw new IllegalArgumentException("connections " + connections + " is below the minimum 1");
        }
        if (timeout.toMillis() < 1) {
            throw new IllegalArgumentException("timeout " + timeout.toMillis() + "ms is below the minimum 1ms");
        }
    }
}
