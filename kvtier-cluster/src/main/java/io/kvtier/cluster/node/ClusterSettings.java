package io.kvtier.cluster.node;

import io.kvtier.cluster.membership.ClusterOptions;
import java.time.Duration;

/**
 * How a node takes part in a cluster; absent (null in the server's options) for a single-node store. Validated on
 * construction; messages name the flag.
 *
 * @param membership         the control plane: node id, weight, cluster port, seeds, failure timeout, endpoint
 * @param replicas           backups per slot ({@code --replicas}), 0..4
 * @param syncReplication    {@code --replication sync} (a write is answered once every backup has it) or async
 * @param peerTimeout        {@code --peer-timeout}: the limit on every call to another node, 10 ms..60 s
 * @param proxy              {@code --proxy}: forward commands for other nodes' slots (cluster-unaware clients) instead
 *                           of answering -MOVED
 * @param rebalanceBytesPerSecond {@code --rebalance-rate}: the most bytes per second one node pulls while it takes
 *                           over slots (state transfer), at least 1 MiB/s
 * @param serveLostCopies    {@code --lost-copies serve}: slots whose complete copies are all gone (every owner stopped
 *                           uncleanly, or lost its disk) serve the best copies that survive by themselves, as soon as
 *                           every member is up or after {@link #LOST_COPY_GRACE}, instead of waiting for an operator's
 *                           {@code kvtier cluster accept-loss} ({@code wait}, the default): cache semantics
 */
public record ClusterSettings(ClusterOptions membership, int replicas, boolean syncReplication, Duration peerTimeout,
                              boolean proxy, long rebalanceBytesPerSecond, boolean serveLostCopies) {
    public static final int DEFAULT_REPLICAS = 1;
    public static final Duration DEFAULT_PEER_TIMEOUT = Duration.ofSeconds(1);
    public static final long DEFAULT_REBALANCE_RATE = 256L << 20;
    /** How long, with {@code --lost-copies serve}, slots wait for a member that is down to bring a complete copy. */
    public static final Duration LOST_COPY_GRACE = Duration.ofSeconds(30);

    /** Settings that wait for an operator when complete copies are lost ({@code --lost-copies wait}). */
    public ClusterSettings(ClusterOptions membership, int replicas, boolean syncReplication, Duration peerTimeout,
                           boolean proxy, long rebalanceBytesPerSecond) {
        this(membership, replicas, syncReplication, peerTimeout, proxy, rebalanceBytesPerSecond, false);
    }

    public ClusterSettings {
        if (membership == null) {
            throw new IllegalArgumentException("cluster membership options are required");
        }
        if (replicas < 0 || replicas > 4) {
            throw new IllegalArgumentException("--replicas " + replicas + " is outside 0..4");
        }
        if (peerTimeout == null || peerTimeout.toMillis() < 10 || peerTimeout.toSeconds() > 60) {
            throw new IllegalArgumentException("--peer-timeout " + (peerTimeout == null ? null
                    : peerTimeout.toMillis() + "ms") + " is outside 10ms..60s");
        }
        if (rebalanceBytesPerSecond < (1 << 20)) {
            throw new IllegalArgumentException("--rebalance-rate " + rebalanceBytesPerSecond
                    + " bytes/s is below 1 MiB/s");
        }
    }
}
