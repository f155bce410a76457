package io.kvtier.bench.cluster;

import io.kvtier.bench.run.BenchOptions;
import io.kvtier.bench.workload.Bounds;
import io.kvtier.client.cluster.ClusterClientOptions;
import io.kvtier.common.Units;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * Everything one {@code kvtier bench cluster} run needs, validated on construction; messages name the flag, the
 * value and the limit. Immutable.
 *
 * @param parts             what to run, in order: {@code scaling}, {@code failover}
 * @param nodes             cluster size compared with 1 node, and the failover cluster's size before the join
 * @param node              flags of every node (launcher, memory, disk, replicas, failure timeout)
 * @param connections       {@code -c}: connections in all, spread over the primaries
 * @param rounds            scaling: A B rounds (1 node, then {@code nodes})
 * @param duration          scaling: length of each SET pass and each GET pass
 * @param valueSize         scaling: setget value size
 * @param serverWarmUp      untimed load each cluster gets before it is measured (the nodes' JIT); zero for none
 * @param timeline          failover: length of the recorded timeline
 * @param killAt            failover: when the second node is killed (kill -9), since the timeline's start
 * @param joinAt            failover: when a new node is started to join
 * @param bucket            failover: time bucket of the counts
 * @param timelineValueSize failover: value size
 * @param timelineKeys      failover: distinct keys, all written before the timeline starts
 * @param writePercent      failover: share of SETs in the load, the rest GETs
 * @param via               failover: route by slot ({@code cluster}) or send everything to node 1 ({@code proxy})
 * @param timeout           failover: per-command timeout, redirects and reconnects included
 * @param verify            self-describing values, every GET checked; the failover run ends with a read of every key
 * @param seed              seed of payloads and of the failover load's choices
 * @param outputDir         where the tables, CSV, JSON, charts and node logs go
 */
public record ClusterBenchOptions(List<String> parts, int nodes, NodeSettings node, int connections, int rounds,
        Duration duration, int valueSize, Duration serverWarmUp, Duration timeline, Duration killAt, Duration joinAt,
        Duration bucket, int timelineValueSize, int timelineKeys, int writePercent, ClusterClientOptions.Mode via,
        Duration timeout, boolean verify, long seed, Path outputDir) {

    public static final Set<String> PARTS = Set.of("scaling", "failover");
    public static final int MAX_NODES = 8;
    public static final long MIN_MEMORY = 16L << 20;

    public ClusterBenchOptions {
        parts = List.copyOf(parts);
        if (parts.isEmpty() || !PARTS.containsAll(parts)) {
            throw new IllegalArgumentException("--parts " + String.join(",", parts) + " must name some of "
                    + new TreeSet<>(PARTS));
        }
        Bounds.check("--nodes", nodes, 2, MAX_NODES);
        Objects.requireNonNull(node, "node");
        Bounds.checkBytes("--memory", node.memory(), MIN_MEMORY, 1L << 40);
        Bounds.checkBytes("--disk", node.disk(), MIN_MEMORY, 1L << 44);
        Bounds.check("--replicas", node.replicas(), 0, 4);
        positive("--failure-timeout", node.failureTimeout(), Duration.ofMillis(100));
        if (!Files.isRegularFile(node.launcher()) || !Files.isExecutable(node.launcher())) {
            throw new IllegalArgumentException("--kvtier-launcher " + node.launcher() + " is not an executable file;"
                    + " give the path of kvtier's 'kvtier' script");
        }
        Bounds.check("--connections", connections, 1, BenchOptions.MAX_CONNECTIONS);
        Bounds.check("--rounds", rounds, 1, 100);
        positive("--duration", duration, Duration.ofMillis(1));
        Bounds.checkBytes("--value-size", valueSize, BenchOptions.MIN_VERIFIED_SIZE,
                Math.min(BenchOptions.MAX_VALUE_SIZE, node.memory() / 2));
        Objects.requireNonNull(serverWarmUp, "serverWarmUp");
        if (serverWarmUp.isNegative() || !serverWarmUp.isZero() && serverWarmUp.toMillis() < 2) {
            throw new IllegalArgumentException("--server-warmup " + serverWarmUp.toMillis()
                    + "ms is neither 0 nor at least 2ms");
        }
        positive("--bucket", bucket, Duration.ofMillis(10));
        positive("--kill-at", killAt, bucket);
        checkOrder(killAt, joinAt, timeline);
        Bounds.checkBytes("--timeline-value-size", timelineValueSize, BenchOptions.MIN_VERIFIED_SIZE,
                Math.min(BenchOptions.MAX_VALUE_SIZE, node.memory() / 2));
        Bounds.check("--timeline-keys", timelineKeys, 1, 10_000_000);
        if ((long) timelineKeys * timelineValueSize > node.memory()) {
            throw new IllegalArgumentException("--timeline-keys " + timelineKeys + " x --timeline-value-size "
                    + Units.bytes(timelineValueSize) + " is above --memory " + Units.bytes(node.memory())
                    + " (every node must be able to hold the whole data set after failovers)");
        }
        Bounds.check("--write-percent", writePercent, 0, 100);
        Objects.requireNonNull(via, "via");
        positive("--timeout", timeout, Duration.ofMillis(1));
        Objects.requireNonNull(outputDir, "outputDir");
    }

    private static void checkOrder(Duration killAt, Duration joinAt, Duration timeline) {
        Objects.requireNonNull(joinAt, "joinAt");
        Objects.requireNonNull(timeline, "timeline");
        if (joinAt.compareTo(killAt) <= 0) {
            throw new IllegalArgumentException("--join-at " + joinAt.toMillis() + "ms must be after --kill-at "
                    + killAt.toMillis() + "ms");
        }
        if (timeline.compareTo(joinAt) <= 0 || timeline.compareTo(BenchOptions.MAX_DURATION) > 0) {
            throw new IllegalArgumentException("--timeline " + timeline.toMillis() + "ms must be after --join-at "
                    + joinAt.toMillis() + "ms and at most 24h");
        }
    }

    private static void positive(String flag, Duration d, Duration min) {
        Objects.requireNonNull(d, flag);
        if (d.compareTo(min) < 0) {
            throw new IllegalArgumentException(flag + " " + d.toMillis() + "ms is below the minimum "
                    + min.toMillis() + "ms");
        }
        if (d.compareTo(BenchOptions.MAX_DURATION) > 0) {
            throw new IllegalArgumentException(flag + " " + d.toMillis() + "ms is above the maximum 24h");
        }
    }

    public boolean runs(String part) {
        return parts.contains(part);
    }

    /** setget keys of a scaling pass: half of one node's memory, so 1 node serves them all from memory too. */
    public long scalingKeys() {
        return Math.max(1, node.memory() / 2 / valueSize);
    }

    /** The options as text, for the JSON reports. */
    public Map<String, String> describe() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("parts", String.join(",", parts));
        m.put("nodes", Integer.toString(nodes));
        m.put("memoryPerNode", Units.bytes(node.memory()));
        m.put("diskPerNode", Units.bytes(node.disk()));
        m.put("replicas", Integer.toString(node.replicas()));
        m.put("failureTimeout", node.failureTimeout().toMillis() + "ms");
        m.put("connections", Integer.toString(connections));
        m.put("rounds", Integer.toString(rounds));
        m.put("duration", duration.toMillis() + "ms");
        m.put("valueSize", Units.bytes(valueSize));
        m.put("scalingKeys", Long.toString(scalingKeys()));
        m.put("serverWarmUp", serverWarmUp.toMillis() + "ms");
        m.put("timeline", timeline.toMillis() + "ms");
        m.put("killAt", killAt.toMillis() + "ms");
        m.put("joinAt", joinAt.toMillis() + "ms");
        m.put("bucket", bucket.toMillis() + "ms");
        m.put("timelineValueSize", Units.bytes(timelineValueSize));
        m.put("timelineKeys", Integer.toString(timelineKeys));
        m.put("writePercent", Integer.toString(writePercent));
        m.put("via", via == ClusterClientOptions.Mode.SLOTS ? "cluster" : "proxy");
        m.put("timeout", timeout.toMillis() + "ms");
        m.put("verify", Boolean.toString(verify));
        m.put("seed", Long.toString(seed));
        m.put("launcher", node.launcher().toString());
        return m;
    }
}
