package io.kvtier.bench;

import io.kvtier.bench.cluster.ClusterBenchOptions;
import io.kvtier.bench.cluster.ClusterBenchRun;
import io.kvtier.bench.cluster.NodeSettings;
import io.kvtier.bench.compare.Launcher;
import io.kvtier.client.cluster.ClusterClientOptions;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kvtier bench cluster}: kvtier clusters started on loopback, 1 node against 3, and a failover timeline. Maps
 * its flags to {@link ClusterBenchOptions}; exit code 0, or 1 when a scaling pass saw errors or wrong bytes or the
 * failover lost or corrupted a key (errors while a node dies are what the timeline measures, not a failure).
 */
@Command(name = "cluster", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Start kvtier nodes on 127.0.0.1 (same jar, free ports, temp data dirs, kill -9 at the end) and"
                + " measure (1) scaling: setget --cluster against a 1-node and a --nodes-node cluster, A B A B,"
                + " FLUSHALL before each pass; (2) failover: a steady SET/GET load on --nodes nodes while n2 is"
                + " killed (kill -9) at --kill-at and a new node joins at --join-at, ops/s and errors per --bucket"
                + " with the cluster's events (view changes seen in CLUSTER INFO, rebalance done) as markers."
                + " Writes scaling.csv/.json, failover.csv/.json, failover-timeline.png/.svg and the node logs.",
            "Example: kvtier bench cluster --value-size 1m -c 16 --duration 10s --out /tmp/cluster"})
final class ClusterCommand implements Callable<Integer> {
    @Option(names = "--parts", paramLabel = "LIST", split = ",", defaultValue = "scaling,failover",
            description = "What to run: scaling, failover (default: ${DEFAULT-VALUE}).")
    List<String> parts;

    @Option(names = "--nodes", paramLabel = "N", defaultValue = "3",
            description = "Nodes compared with 1, and the failover cluster's size before the join (default: "
                    + "${DEFAULT-VALUE}).")
    int nodes;

    @Option(names = "--replicas", paramLabel = "R", defaultValue = "1",
            description = "Backups per slot, kvtier server --replicas (a 1-node cluster has none) (default: "
                    + "${DEFAULT-VALUE}).")
    int replicas;

    @Option(names = "--failure-timeout", paramLabel = "DURATION", defaultValue = "2s",
            converter = FlagValues.DurationConverter.class,
            description = "kvtier server --failure-timeout of every node (default: ${DEFAULT-VALUE}).")
    Duration failureTimeout;

    @Option(names = "--memory", paramLabel = "SIZE", defaultValue = "1g", converter = FlagValues.SizeConverter.class,
            description = "--memory of every node (default: ${DEFAULT-VALUE}).")
    long memory;

    @Option(names = "--disk", paramLabel = "SIZE", defaultValue = "4g", converter = FlagValues.SizeConverter.class,
            description = "--disk of every node (default: ${DEFAULT-VALUE}).")
    long disk;

    @Option(names = {"-c", "--connections"}, paramLabel = "N", defaultValue = "16",
            description = "Connections in all, spread over the primaries (16 over 3 nodes: 6+5+5), for both parts "
                    + "(default: ${DEFAULT-VALUE}).")
    int connections;

    @Option(names = "--rounds", paramLabel = "N", defaultValue = "2",
            description = "Scaling: rounds, each 1 node then --nodes nodes (default: ${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--duration", paramLabel = "DURATION", defaultValue = "10s",
            converter = FlagValues.DurationConverter.class,
            description = "Scaling: length of each SET pass and each GET pass (default: ${DEFAULT-VALUE}).")
    Duration duration;

    @Option(names = {"-s", "--value-size"}, paramLabel = "SIZE", defaultValue = "1m",
            converter = FlagValues.SizeConverter.class,
            description = "Scaling: setget value size; key space = half of --memory (default: ${DEFAULT-VALUE}).")
    long valueSize;

    @Option(names = "--server-warmup", paramLabel = "DURATION", defaultValue = "4s",
            converter = FlagValues.DurationConverter.class,
            description = "Untimed load each cluster gets first (the nodes' JIT); the failover run uses at most 5 s"
                    + " of it (0 = none; default: ${DEFAULT-VALUE}).")
    Duration serverWarmUp;

    @Option(names = "--timeline", paramLabel = "DURATION", defaultValue = "35s",
            converter = FlagValues.DurationConverter.class,
            description = "Failover: length of the recorded timeline (default: ${DEFAULT-VALUE}).")
    Duration timeline;

    @Option(names = "--kill-at", paramLabel = "DURATION", defaultValue = "10s",
            converter = FlagValues.DurationConverter.class,
            description = "Failover: when n2 is killed with kill -9 (default: ${DEFAULT-VALUE}).")
    Duration killAt;

    @Option(names = "--join-at", paramLabel = "DURATION", defaultValue = "20s",
            converter = FlagValues.DurationConverter.class,
            description = "Failover: when a new node is started to join (default: ${DEFAULT-VALUE}).")
    Duration joinAt;

    @Option(names = "--bucket", paramLabel = "DURATION", defaultValue = "100ms",
            converter = FlagValues.DurationConverter.class,
            description = "Failover: time bucket of the counts (default: ${DEFAULT-VALUE}).")
    Duration bucket;

    @Option(names = "--timeline-value-size", paramLabel = "SIZE", defaultValue = "64k",
            converter = FlagValues.SizeConverter.class,
            description = "Failover: value size (default: ${DEFAULT-VALUE}).")
    long timelineValueSize;

    @Option(names = "--timeline-keys", paramLabel = "N", defaultValue = "4096",
            description = "Failover: distinct keys, all written before the timeline starts (default: "
                    + "${DEFAULT-VALUE}).")
    int timelineKeys;

    @Option(names = "--write-percent", paramLabel = "P", defaultValue = "50",
            description = "Failover: share of SETs in the load, the rest GETs (default: ${DEFAULT-VALUE}).")
    int writePercent;

    @Option(names = "--via", paramLabel = "cluster|proxy", defaultValue = "cluster",
            description = "Failover: route by slot as a cluster client (cluster), or send everything to n1 on "
                    + "cluster-unaware connections, which n1 forwards (proxy) (default: ${DEFAULT-VALUE}).")
    String via;

    @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "2s",
            converter = FlagValues.DurationConverter.class,
            description = "Failover: per-command timeout, redirects and reconnects included (default: "
                    + "${DEFAULT-VALUE}).")
    Duration timeout;

    @Option(names = "--verify", defaultValue = "false",
            description = "Self-describing values, every GET checked byte by byte; the failover run ends with a GET"
                    + " of every key (a miss is a lost key) (default: ${DEFAULT-VALUE}).")
    boolean verify;

    @Option(names = "--seed", paramLabel = "N", defaultValue = "1",
            description = "Seed of payloads and of the failover load's choices (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = {"-o", "--out"}, paramLabel = "DIR", defaultValue = "bench-results/cluster",
            description = "Directory for the reports, the chart and the node logs (default: ${DEFAULT-VALUE}).")
    Path outputDir;

    @Option(names = "--kvtier-launcher", paramLabel = "PATH",
            description = "kvtier's launcher script (default: the executable 'kvtier' above the running jar).")
    Path launcher;

    ClusterBenchOptions options() {
        ClusterClientOptions.Mode mode = switch (via) {
            case "cluster" -> ClusterClientOptions.Mode.SLOTS;
            case "proxy" -> ClusterClientOptions.Mode.PROXY;
            default -> throw new IllegalArgumentException("--via " + via + " is neither cluster nor proxy");
        };
        NodeSettings node = new NodeSettings(launcher != null ? launcher : Launcher.discover(), memory, disk,
                replicas, failureTimeout);
        return new ClusterBenchOptions(parts, nodes, node, connections, rounds, duration,
                WorkloadCommand.sizes("--value-size", List.of(valueSize)).getFirst(), serverWarmUp, timeline, killAt,
                joinAt, bucket, WorkloadCommand.sizes("--timeline-value-size", List.of(timelineValueSize)).getFirst(),
                timelineKeys, writePercent, mode, timeout, verify, seed, outputDir);
    }

    @Override
    public Integer call() throws Exception {
        return ClusterBenchRun.execute(options(), System.out).failed() ? 1 : 0;
    }
}
