package io.kvtier.it.mini;

import io.kvtier.cluster.membership.ClusterOptions;
import io.kvtier.cluster.node.ClusterNode;
import io.kvtier.cluster.node.ClusterSettings;
import io.kvtier.server.KvtierServer;
import io.kvtier.server.config.ClientLimits;
import io.kvtier.server.config.ServerOptions;
import io.kvtier.testkit.LocalPorts;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.util.SafeEncoder;

/**
 * A cluster of real {@link KvtierServer}s in this JVM (as Apache Ratis's MiniRaftCluster is for Raft): real JGroups and
 * Raft on loopback, real peer connections, each node with a data directory of its own and ports picked up front (a
 * restarted node comes back at the same address), so that the cluster's protocol scenarios run in seconds instead of
 * the tens of seconds that starting JVMs costs. Faults, all for real inside the process:
 * <ul>
 *   <li>{@link #kill}: the node's links are cut first (its control-plane messages and peer calls are dropped, see
 *       {@link io.kvtier.cluster.membership.LinkFilter}), then it stops without leaving and without writing memory to
 *       disk ({@link KvtierServer#crash}): what a kill -9 leaves;</li>
 *   <li>{@link #stop}: a graceful stop (SIGTERM's path, {@link KvtierServer#close});</li>
 *   <li>{@link #restart}: the same id, directory and ports again, a new process incarnation;</li>
 *   <li>{@link #partition}, {@link #isolate}, {@link #heal}: silent cuts between nodes, on both planes; clients still
 *       reach every node, as in the process-level nemesis suite.</li>
 * </ul>
 * A paused process (SIGSTOP) is not modelled: what it does on waking is the process-level suite's
 * ({@code ClusterNemesisIT}). Not thread-safe: one test drives it.
 */
public final class MiniCluster implements AutoCloseable {
    /** Settings every node of a cluster shares; the defaults suit a loaded 2-core machine. */
    public record Settings(int replicas, Duration lease, Duration peerTimeout, Duration failureTimeout,
                           long memoryBytes, long diskBytes, UnaryOperator<ServerOptions> custom) {
        public static Settings defaults() {
            return new Settings(1, Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofSeconds(2), 64L << 20,
                    512L << 20, o -> o);
        }

        public Settings withLease(Duration d) {
            return new Settings(replicas, d, peerTimeout, failureTimeout, memoryBytes, diskBytes, custom);
        }

        public Settings withFailureTimeout(Duration d) {
            return new Settings(replicas, lease, peerTimeout, d, memoryBytes, diskBytes, custom);
        }

        public Settings withMemory(long bytes) {
            return new Settings(replicas, lease, peerTimeout, failureTimeout, bytes, diskBytes, custom);
        }

        public Settings withReplicas(int n) {
            return new Settings(n, lease, peerTimeout, failureTimeout, memoryBytes, diskBytes, custom);
        }
    }

    /** One node: its identity and addresses (fixed for its lifetime), and its server while it runs. */
    public static final class Node {
        public final String id;
        public final int index;
        public final Path dir;
        public final int respPort;
        public final int clusterPort;
        private final boolean founder;
        private volatile KvtierServer server;
        private volatile boolean down;

        private Node(String id, int index, Path dir, int respPort, int clusterPort, boolean founder) {
            this.id = id;
            this.index = index;
            this.dir = dir;
            this.respPort = respPort;
            this.clusterPort = clusterPort;
            this.founder = founder;
        }

        /** The running server; throws if the node is not running. */
        public KvtierServer server() {
            KvtierServer s = server;
            if (s == null) {
                throw new IllegalStateException(id + " is not running");
            }
            return s;
        }

        public boolean running() {
            return server != null;
        }

        public ClusterNode cluster() {
            return server().context().cluster();
        }

        /** A Jedis connection to this node (the caller closes it). */
        public Jedis jedis() {
            return new Jedis("127.0.0.1", respPort, 5_000);
        }

        @Override
        public String toString() {
            return id;
        }
    }

    private final Path root;
    private final Settings settings;
    private final List<Node> nodes = new ArrayList<>();
    /** Pairs of node ids ("a|b", a < b) that cannot reach each other. */
    private final Set<String> cuts = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final List<String> voters;

    private MiniCluster(Path root, Settings settings, List<String> voters) {
        this.root = root;
        this.settings = settings;
        this.voters = voters;
    }

    /** Starts {@code n} nodes, n1..nN, all voters of the new cluster, and waits until they serve one table. */
    public static MiniCluster start(Path root, int n) throws Exception {
        return start(root, n, Settings.defaults());
    }

    public static MiniCluster start(Path root, int n, Settings settings) throws Exception {
        List<String> voters = IntStream.rangeClosed(1, n).mapToObj(i -> "n" + i).toList();
        MiniCluster c = new MiniCluster(root, settings, voters);
        for (int i = 0; i < n; i++) {
            c.nodes.add(c.newNode(true));
        }
        try {
            // In parallel: a founder opens its port only once a majority of the voters is up.
            List<CompletableFuture<Void>> starting = c.nodes.stream()
                    .map(node -> CompletableFuture.runAsync(() -> c.launch(node),
                            r -> Thread.ofPlatform().daemon().start(r))).toList();
            starting.forEach(CompletableFuture::join);
            c.awaitAgreement(n, 60_000);
        } catch (RuntimeException | Error | InterruptedException e) {
            c.close();
            throw e;
        }
        return c;
    }

    private Node newNode(boolean founder) {
        int i = nodes.size();
        String id = "n" + (i + 1);
        return new Node(id, i, root.resolve(id), freePort(), freePort(), founder);
    }

    public Node node(int index) {
        return nodes.get(index);
    }

    public Node node(String id) {
        return nodes.stream().filter(n -> n.id.equals(id)).findFirst().orElseThrow();
    }

    public List<Node> nodes() {
        return List.copyOf(nodes);
    }

    public List<Node> running() {
        return nodes.stream().filter(Node::running).toList();
    }

    /** Starts a node with the next id, a learner that joins the running cluster; returns once it is started. */
    public Node add() {
        Node node = newNode(false);
        nodes.add(node);
        launch(node);
        return node;
    }

    private void launch(Node node) {
        node.down = false;
        try {
            node.server = KvtierServer.start(options(node));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The options of {@code node}: those the command line gives a cluster node, in-JVM sizes, its link filter. */
    private ServerOptions options(Node node) {
        String seeds = nodes.stream().map(n -> "127.0.0.1:" + n.clusterPort).collect(Collectors.joining(","));
        ClusterOptions membership = new ClusterOptions(node.id, 1, "127.0.0.1", node.clusterPort,
                List.of(seeds.split(",")), settings.failureTimeout(), "mini", "127.0.0.1:" + node.respPort, null,
                node.founder ? voters : List.of(), settings.lease(), node.dir.resolve("raft"),
                peer -> reaches(node.id, peer));
        ClusterSettings cluster = new ClusterSettings(membership, settings.replicas(), true, settings.peerTimeout(),
                true, ClusterSettings.DEFAULT_REBALANCE_RATE);
        ServerOptions options = new ServerOptions("127.0.0.1", node.respPort, node.dir, settings.memoryBytes(),
                settings.diskBytes(), 64L << 20, null, true, 0, 1_000, 2, 1, 32L << 20,
                ServerOptions.DEFAULT_PIN_SHARE, 0, cluster, ClientLimits.defaults(), null, 0);
        return settings.custom().apply(options);
    }

    /** Whether messages between {@code a} and {@code b} get through now. */
    boolean reaches(String a, String b) {
        Node na = find(a);
        Node nb = find(b);
        if (na != null && na.down || nb != null && nb.down) {
            return false;
        }
        return !cuts.contains(pair(a, b));
    }

    private Node find(String id) {
        for (Node n : nodes) {
            if (n.id.equals(id)) {
                return n;
            }
        }
        return null;
    }

    private static String pair(String a, String b) {
        return a.compareTo(b) < 0 ? a + "|" + b : b + "|" + a;
    }

    /** kill -9: links cut first, then stopped without a leave and without writing memory to disk. */
    public void kill(Node node) {
        node.down = true;
        KvtierServer s = node.server;
        node.server = null;
        if (s != null) {
            s.crash();
        }
    }

    /** A graceful stop (SIGTERM): leaves, writes memory to disk. */
    public void stop(Node node) throws IOException {
        KvtierServer s = node.server;
        node.server = null;
        if (s != null) {
            s.close();
        }
        node.down = true;
    }

    /** Starts a stopped or killed node again: same id, directory and ports; a new incarnation. */
    public void restart(Node node) {
        if (node.running()) {
            throw new IllegalStateException(node + " is running");
        }
        launch(node);
    }

    /** Cuts every link between a node of one side and a node of another (silently, both planes). */
    @SafeVarargs
    public final void partition(List<Node>... sides) {
        for (int i = 0; i < sides.length; i++) {
            for (int j = i + 1; j < sides.length; j++) {
                for (Node a : sides[i]) {
                    for (Node b : sides[j]) {
                        cuts.add(pair(a.id, b.id));
                    }
                }
            }
        }
    }

    /** Cuts {@code node} off from every other node (clients still reach it). */
    public void isolate(Node node) {
        List<Node> others = new ArrayList<>(nodes);
        others.remove(node);
        partition(List.of(node), others);
    }

    /** Cuts only the link between {@code a} and {@code b}. */
    public void cut(Node a, Node b) {
        cuts.add(pair(a.id, b.id));
    }

    /** Restores every link. */
    public void heal() {
        cuts.clear();
    }

    /** A running node's KVT.STATUS as name to value (CLUSTER INFO's fields and kvtier's own). */
    public static Map<String, String> status(Node node) {
        try (Jedis j = node.jedis()) {
            String text = SafeEncoder.encode((byte[]) j.sendCommand(() -> SafeEncoder.encode("KVT.STATUS")));
            return text.lines().filter(l -> l.contains(":"))
                    .collect(Collectors.toMap(l -> l.substring(0, l.indexOf(':')), l -> l.substring(l.indexOf(':') + 1),
                            (a, b) -> b));
        }
    }

    /**
     * Waits until every running node serves the same epoch over {@code members} members, none importing; returns the
     * milliseconds it took.
     */
    public long awaitAgreement(int members, long timeoutMillis) throws InterruptedException {
        return awaitAgreement(members, timeoutMillis, null);
    }

    /** As {@link #awaitAgreement(int, long)}, among {@code among} only (null: every running node). */
    public long awaitAgreement(int members, long timeoutMillis, List<Node> among) throws InterruptedException {
        long start = System.nanoTime();
        String last = "";
        while ((System.nanoTime() - start) / 1_000_000 < timeoutMillis) {
            try {
                List<Map<String, String>> infos = (among == null ? running() : among).stream()
                        .map(MiniCluster::status).toList();
                boolean agreed = infos.stream().allMatch(i -> i.get("cluster_known_nodes").equals("" + members)
                        && i.get("kvtier_serving").equals("1") && i.get("kvtier_slots_importing").equals("0")
                        && "0".equals(i.get("kvtier_rebalance_pending")) && "0".equals(i.get("kvtier_slots_fenced")))
                        && infos.stream().map(i -> i.get("cluster_current_epoch")).distinct().count() == 1;
                if (agreed) {
                    return (System.nanoTime() - start) / 1_000_000;
                }
                last = infos.stream().map(i -> i.get("kvtier_node_id") + " epoch " + i.get("cluster_current_epoch")
                        + " members " + i.get("cluster_known_nodes") + " serving " + i.get("kvtier_serving")
                        + " importing " + i.get("kvtier_slots_importing")).toList().toString();
            } catch (RuntimeException notYet) {
                last = notYet.toString();
            }
            Thread.sleep(20);
        }
        throw new AssertionError("nodes did not agree on " + members + " members within " + timeoutMillis
                + " ms; last: " + last);
    }

    /** Stops every running node gracefully, in parallel. */
    @Override
    public void close() {
        List<CompletableFuture<Void>> stopping = new ArrayList<>();
        for (Node n : nodes) {
            KvtierServer s = n.server;
            n.server = null;
            if (s != null) {
                stopping.add(CompletableFuture.runAsync(() -> {
                    try {
                        s.close();
                    } catch (IOException e) {
                        // a test's cluster going away: what it lost does not matter any more
                    }
                }, r -> Thread.ofPlatform().daemon().start(r)));
            }
        }
        stopping.forEach(CompletableFuture::join);
    }

    private static int freePort() {
        try {
            return LocalPorts.free();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Ids of {@code nodes}, for messages. */
    public static Set<String> ids(List<Node> nodes) {
        Set<String> out = new HashSet<>();
        nodes.forEach(n -> out.add(n.id));
        return out;
    }
}
