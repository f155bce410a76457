package io.kvtier.cluster.membership;

import io.kvtier.client.HostPort;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * How a node joins the cluster's control plane: who it is, where it listens, how it finds the others and where
 * clients reach it. Immutable and validated on construction; error messages name the command-line flag and the limit.
 *
 * @param nodeId         this node's stable identity, non-blank (decides its slots, see {@code Placement})
 * @param weight         this node's capacity, positive; only ratios between members matter
 * @param bindHost       the address the JGroups TCP transport binds to; {@code null} means {@value #DEFAULT_BIND_HOST}
 * @param clusterPort    the JGroups TCP port, 0..65535; 0 takes any free port (tests only: seeds then cannot name it)
 * @param seeds          "host:port" of nodes to contact when joining; {@code null} means none (start a new cluster
 *                       unless someone finds us)
 * @param failureTimeout how long a silent node may stay in the view, at least 100 ms; {@code null} means 5 s
 * @param clusterName    the JGroups cluster to join, non-blank; {@code null} means {@value #DEFAULT_CLUSTER_NAME}
 * @param endpoint       the RESP endpoint this node advertises to the others and to clients, "host:port" with the
 *                       port in 1..65535; {@code null} or "" means unknown (tests and placement only)
 * @param dnsQuery       a DNS name whose A records are the cluster's nodes (a Kubernetes headless Service), each
 *                       reached at this node's cluster port (so that must not be 0); non-blank, {@code null} means no
 *                       DNS discovery
 * @param voters         the node ids of a new cluster's voting members ({@code --voters}): the configured
 *                       membership whose majority commits every configuration change. Read only when this node has no
 *                       Raft state yet; afterwards the log says who votes. Empty (or {@code null}): with no seeds and no
 *                       DNS query, this node alone (a single-node cluster); otherwise none, so the node joins a
 *                       running cluster as a learner and never founds one
 * @param lease          how long a primary may serve on one renewal ({@code --lease}), 100 ms..60 s;
 *                       {@code null} means {@value #DEFAULT_LEASE_MS} ms. A dead node's slots move on after about this
 * @param stateDir       where the Raft log and its snapshots live ({@code <--dir>/raft}); {@code null} means a fresh
 *                       temporary directory (tests only: a restarted node then forgets its votes)
 * @param links          which peers this node exchanges messages with ({@link LinkFilter}, in-JVM fault tests);
 *                       {@code null}, every one (production: the command line cannot set it)
 */
public record ClusterOptions(String nodeId, long weight, String bindHost, int clusterPort, List<String> seeds,
                             Duration failureTimeout, String clusterName, String endpoint, String dnsQuery,
                             List<String> voters, Duration lease, Path stateDir, LinkFilter links) {
    public static final String DEFAULT_BIND_HOST = "127.0.0.1";
    public static final Duration DEFAULT_FAILURE_TIMEOUT = Duration.ofSeconds(5);
    public static final String DEFAULT_CLUSTER_NAME = "kvtier";
    public static final long DEFAULT_LEASE_MS = 1_000;
    static final Duration MIN_FAILURE_TIMEOUT = Duration.ofMillis(100);

    /** Options with no link filter (every deployment: see {@code links}). */
    public ClusterOptions(String nodeId, long weight, String bindHost, int clusterPort, List<String> seeds,
                          Duration failureTimeout, String clusterName, String endpoint, String dnsQuery,
                          List<String> voters, Duration lease, Path stateDir) {
        this(nodeId, weight, bindHost, clusterPort, seeds, failureTimeout, clusterName, endpoint, dnsQuery, voters,
                lease, stateDir, null);
    }

    public ClusterOptions {
        if (nodeId == null || nodeId.isBlank()) {
            throw new IllegalArgumentException("--node-id \"" + nodeId + "\" must not be blank");
        }
        if (weight < 1) {
            throw new IllegalArgumentException("--weight " + weight + " must be at least 1");
        }
        bindHost = Objects.requireNonNullElse(bindHost, DEFAULT_BIND_HOST);
        if (bindHost.isBlank()) {
            throw new IllegalArgumentException("--bind \"" + bindHost + "\" must not be blank");
        }
        if (clusterPort < 0 || clusterPort > 65535) {
            throw new IllegalArgumentException("--cluster-port " + clusterPort + " must be in 0..65535");
        }
        seeds = seeds == null ? List.of() : List.copyOf(seeds);
        seeds.forEach(ClusterOptions::parseSeed);
        failureTimeout = Objects.requireNonNullElse(failureTimeout, DEFAULT_FAILURE_TIMEOUT);
        if (failureTimeout.compareTo(MIN_FAILURE_TIMEOUT) < 0) {
            throw new IllegalArgumentException("--failure-timeout " + failureTimeout.toMillis() + "ms must be at least "
                    + MIN_FAILURE_TIMEOUT.toMillis() + "ms");
        }
        clusterName = Objects.requireNonNullElse(clusterName, DEFAULT_CLUSTER_NAME);
        if (clusterName.isBlank()) {
            throw new IllegalArgumentException("--cluster-name \"" + clusterName + "\" must not be blank");
        }
        endpoint = Objects.requireNonNullElse(endpoint, "");
        if (!endpoint.isEmpty()) {
            HostPort.parse(endpoint, "--announce");
        }
        if (dnsQuery != null && dnsQuery.isBlank()) {
            throw new IllegalArgumentException("--dns-query \"" + dnsQuery + "\" must not be blank");
        }
        voters = voters == null ? List.of() : List.copyOf(new java.util.LinkedHashSet<>(voters));
        for (String v : voters) {
            if (v.isBlank()) {
                throw new IllegalArgumentException("--voters has a blank node id");
            }
        }
        if (voters.isEmpty() && seeds.isEmpty() && dnsQuery == null) {
            voters = List.of(nodeId); // configured as a single-node cluster
        }
        lease = Objects.requireNonNullElse(lease, Duration.ofMillis(DEFAULT_LEASE_MS));
        if (lease.toMillis() < 100 || lease.toSeconds() > 60) {
            throw new IllegalArgumentException("--lease " + lease.toMillis() + "ms is outside 100ms..60s");
        }
        if (dnsQuery != null && clusterPort == 0) {
            throw new IllegalArgumentException("--dns-query \"" + dnsQuery + "\" needs a fixed --cluster-port, not 0"
                    + " (peers are asked at the same port as this node's)");
        }
    }

    /** Options with the default bind host, failure timeout and cluster name, no endpoint and no DNS discovery. */
    public static ClusterOptions of(String nodeId, long weight, int clusterPort, List<String> seeds) {
        return new ClusterOptions(nodeId, weight, null, clusterPort, seeds, null, null, null, null, null, null, null);
    }

    public ClusterOptions withFailureTimeout(Duration timeout) {
        return new ClusterOptions(nodeId, weight, bindHost, clusterPort, seeds, timeout, clusterName, endpoint,
                dnsQuery, voters, lease, stateDir, links);
    }

    public ClusterOptions withClusterName(String name) {
        return new ClusterOptions(nodeId, weight, bindHost, clusterPort, seeds, failureTimeout, name, endpoint,
                dnsQuery, voters, lease, stateDir, links);
    }

    public ClusterOptions withEndpoint(String resp) {
        return new ClusterOptions(nodeId, weight, bindHost, clusterPort, seeds, failureTimeout, clusterName, resp,
                dnsQuery, voters, lease, stateDir, links);
    }

    public ClusterOptions withDnsQuery(String query) {
        return new ClusterOptions(nodeId, weight, bindHost, clusterPort, seeds, failureTimeout, clusterName, endpoint,
                query, voters, lease, stateDir, links);
    }

    public ClusterOptions withVoters(List<String> ids) {
        return new ClusterOptions(nodeId, weight, bindHost, clusterPort, seeds, failureTimeout, clusterName, endpoint,
                dnsQuery, ids, lease, stateDir, links);
    }

    public ClusterOptions withLease(Duration duration) {
        return new ClusterOptions(nodeId, weight, bindHost, clusterPort, seeds, failureTimeout, clusterName, endpoint,
                dnsQuery, voters, duration, stateDir, links);
    }

    public ClusterOptions withStateDir(Path dir) {
        return new ClusterOptions(nodeId, weight, bindHost, clusterPort, seeds, failureTimeout, clusterName, endpoint,
                dnsQuery, voters, lease, dir, links);
    }

    /** These options with {@code filter} deciding which peers this node reaches (in-JVM fault tests only). */
    public ClusterOptions withLinks(LinkFilter filter) {
        return new ClusterOptions(nodeId, weight, bindHost, clusterPort, seeds, failureTimeout, clusterName, endpoint,
                dnsQuery, voters, lease, stateDir, filter);
    }

    /**
     * The seeds, resolved now (at join time, not at construction, so options stay pure data).
     *
     * @throws IllegalArgumentException naming the seed whose host does not resolve
     */
    List<InetSocketAddress> resolvedSeeds() {
        return seeds.stream().map(seed -> {
            InetSocketAddress unresolved = parseSeed(seed);
            InetSocketAddress resolved = new InetSocketAddress(unresolved.getHostString(), unresolved.getPort());
            if (resolved.isUnresolved()) {
                throw new IllegalArgumentException("--seeds entry \"" + seed + "\": host does not resolve");
            }
            return resolved;
        }).toList();
    }

    /** "host:port" or "[v6]:port"; the port in 1..65535. */
    private static InetSocketAddress parseSeed(String seed) {
        HostPort parsed = HostPort.parse(seed, "--seeds entry");
        return InetSocketAddress.createUnresolved(parsed.host(), parsed.port());
    }
}
