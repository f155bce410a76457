package io.kvtier.it;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.IntFunction;
import java.util.stream.Collectors;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.util.SafeEncoder;

/**
 * Real kvtier node processes forming one cluster, on 127.0.0.1 or each in a network namespace of its own: RESP and
 * cluster ports picked up front (seeds name them), nodes started in parallel, helpers to wait until every live node
 * agrees on the same table.
 */
final class TestCluster implements AutoCloseable {
    static final String FAILURE_TIMEOUT = "2s";
    /**
     * Twice the default (1 s): on this 2-core machine running three to five nodes, the load and the test, a node in
     * its first seconds answered a replication or proxied call after 1 s (-UNREPLICATED, -UNREACHABLE) in four cluster
     * tests of one CI run. Tests that measure calls against the default pass {@code --peer-timeout 1s} themselves.
     */
    static final String PEER_TIMEOUT = "2s";

    private final Path dir;
    /** Null: every node on 127.0.0.1. */
    private final NetworkNamespaces namespaces;
    private final List<Integer> respPorts = new ArrayList<>();
    private final List<Integer> clusterPorts = new ArrayList<>();

    /** Node {@code i}'s control-plane port (CLUSTER NODES's bus port). */
    int clusterPort(int i) {
        return clusterPorts.get(i);
    }
    final List<KvtierProcess> nodes = new ArrayList<>();
    /** Each node's launch index: its ports, its namespace and its id (n1 is 0), whatever its place in {@link #nodes}. */
    private final Map<KvtierProcess, Integer> launchIndex = new java.util.concurrent.ConcurrentHashMap<>();
    /** Nodes {@link #replaceWithNew} took out of {@link #nodes}: still closed with the cluster. */
    private final List<KvtierProcess> retired = new ArrayList<>();
    private IntFunction<List<String>> extraFlags = i -> List.of();
    /**
     * How many nodes the cluster started with: each gets {@code --voters n1,...,nN}, the Raft voters a new cluster
     * needs; nodes added later get none and join as learners.
     */
    private final int initialMembers;

    private TestCluster(Path dir, NetworkNamespaces namespaces, int initialMembers) {
        this.dir = dir;
        this.namespaces = namespaces;
        this.initialMembers = initialMembers;
    }

    /** Starts {@code n} nodes (ids n1..nN) and waits until they agree; {@code capacity} more may join later. */
    static TestCluster start(Path dir, int n, int capacity) throws Exception {
        return start(dir, n, capacity, null, i -> List.of());
    }

    /** Starts {@code n} nodes, node i in namespace i of {@code namespaces}, and waits until they agree. */
    static TestCluster startIn(NetworkNamespaces namespaces, Path dir, int n) throws Exception {
        return start(dir, n, 0, namespaces, i -> List.of());
    }

    /** Like {@link #startIn(NetworkNamespaces, Path, int)}, with flags for each node as {@link #startWith} takes. */
    static TestCluster startIn(NetworkNamespaces namespaces, Path dir, int n, IntFunction<List<String>> extraFlags)
            throws Exception {
        return start(dir, n, 0, namespaces, extraFlags);
    }

    /**
     * Like {@link #startIn(NetworkNamespaces, Path, int, IntFunction)}, with room for {@code capacity} more nodes (the
     * namespaces must be as many as the nodes and the room together).
     */
    static TestCluster startIn(NetworkNamespaces namespaces, Path dir, int n, int capacity,
                               IntFunction<List<String>> extraFlags) throws Exception {
        return start(dir, n, capacity, namespaces, extraFlags);
    }

    /**
     * Like {@link #start}, with {@code extraFlags.apply(i)} appended to the flags of node i (0-based; nodes added
     * later with {@link #addWith} too), e.g. a {@code --metrics-port} each. A flag given there with a value replaces
     * the default of the same name (e.g. {@code --memory 256m}).
     */
    static TestCluster startWith(Path dir, int n, int capacity, IntFunction<List<String>> extraFlags)
            throws Exception {
        return start(dir, n, capacity, null, extraFlags);
    }

    private static TestCluster start(Path dir, int n, int capacity, NetworkNamespaces namespaces,
                                     IntFunction<List<String>> extraFlags) throws Exception {
        TestCluster c = new TestCluster(dir, namespaces, n);
        c.extraFlags = extraFlags;
        for (int i = 0; i < n + capacity; i++) {
            c.respPorts.add(KvtierProcess.freePortForTests());
            c.clusterPorts.add(KvtierProcess.freePortForTests());
        }
        List<CompletableFuture<KvtierProcess>> starting = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int k = i;
            // A thread each: a node of a new cluster opens its port only once a majority of the voters is up, so
            // starting them one after the other (the common pool has one thread on two cores) would wait in turn.
            starting.add(CompletableFuture.supplyAsync(() -> c.launch(k, extraFlags.apply(k)),
                    r -> Thread.ofPlatform().daemon().start(r)));
        }
        try {
            for (CompletableFuture<KvtierProcess> f : starting) {
                c.nodes.add(f.join());
            }
            c.awaitAgreement(n, 60_000);
            c.awaitSettled(20_000);
        } catch (RuntimeException | Error | InterruptedException e) {
            // The caller never gets the cluster to close: kill what started (and what is still starting).
            for (CompletableFuture<KvtierProcess> f : starting) {
                f.thenAccept(p -> {
                    if (!c.nodes.contains(p)) {
                        c.nodes.add(p);
                    }
                }).exceptionally(x -> null).join();
            }
            c.close();
            throw e;
        }
        return c;
    }

    private String host(int i) {
        return namespaces == null ? "127.0.0.1" : namespaces.address(i);
    }

    private KvtierProcess launch(int i, List<String> extraFlags) {
        String seeds = java.util.stream.IntStream.range(0, clusterPorts.size())
                .mapToObj(k -> host(k) + ":" + clusterPorts.get(k)).collect(Collectors.joining(","));
        List<String> flags = new ArrayList<>(List.of("--memory", "64m", "--disk", "512m", "--cluster-port",
                Integer.toString(clusterPorts.get(i)), "--seeds", seeds, "--node-id", "n" + (i + 1), "--replicas", "1",
                "--failure-timeout", FAILURE_TIMEOUT, "--peer-timeout", PEER_TIMEOUT));
        if (i < initialMembers) {
            flags.addAll(List.of("--voters", java.util.stream.IntStream.rangeClosed(1, initialMembers)
                    .mapToObj(k -> "n" + k).collect(Collectors.joining(","))));
        }
        if (namespaces != null) {
            // A namespace's address is not loopback: without a password, protected mode would refuse to start.
            flags.addAll(List.of("--bind", host(i), "--protected-mode", "no"));
        }
        for (int f = 0; f + 1 < extraFlags.size(); f += 2) { // an extra flag replaces the default of that name
            int at = flags.indexOf(extraFlags.get(f));
            if (at >= 0 && extraFlags.get(f).startsWith("--")) {
                flags.subList(at, at + 2).clear();
            }
        }
        flags.addAll(extraFlags);
        try {
            KvtierProcess p = KvtierProcess.startAt(host(i), respPorts.get(i), namespaces == null ? List.of()
                    : namespaces.exec(i), dir.resolve("n" + (i + 1)), flags.toArray(String[]::new));
            launchIndex.put(p, i);
            return p;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Starts the next unused node id and returns it (it joins the running cluster). */
    KvtierProcess add() {
        return addWith(List.of());
    }

    /** Starts the next unused node id with {@code extraFlags} after the usual ones; it joins the running cluster. */
    KvtierProcess addWith(List<String> extraFlags) {
        KvtierProcess p = launch(nodes.size() + retired.size(), extraFlags);
        nodes.add(p);
        return p;
    }

    /**
     * Starts the next unused node id (the room {@code capacity} left) in place of {@code nodes.get(index)}, which is
     * down for good: it joins the running cluster as a new member, and {@code nodes.get(index)} is the new node from
     * then on. The caller forgets the old member (as {@code kvtier cluster replace} does).
     */
    KvtierProcess replaceWithNew(int index) {
        KvtierProcess p = launch(nodes.size() + retired.size(), extraFlags.apply(index));
        retired.add(nodes.set(index, p));
        return p;
    }

    /**
     * The namespace (and launch index) of {@code nodes.get(index)}: after {@link #replaceWithNew} a node's place in the
     * list is no longer its namespace.
     */
    int namespaceOf(int index) {
        return launchIndex.get(nodes.get(index));
    }

    List<KvtierProcess> live() {
        return nodes.stream().filter(KvtierProcess::isAlive).toList();
    }

    /**
     * A node's KVT.STATUS as name -> value: CLUSTER INFO's fields plus its id, the members and their slot counts
     * (values may hold ':', split at the first).
     */
    static Map<String, String> status(KvtierProcess node) {
        try (Jedis j = node.jedis(2_000)) {
            String text = SafeEncoder.encode((byte[]) j.sendCommand(() -> SafeEncoder.encode("KVT.STATUS")));
            return text.lines().filter(l -> l.contains(":"))
                    .collect(Collectors.toMap(l -> l.substring(0, l.indexOf(':')), l -> l.substring(l.indexOf(':') + 1),
                            (a, b) -> b));
        }
    }

    /** Waits until every node in {@code among} serves the same epoch over {@code members} members, none importing. */
    long awaitAgreement(int members, long timeoutMillis, List<KvtierProcess> among) throws InterruptedException {
        long start = System.nanoTime();
        long deadline = start + timeoutMillis * 1_000_000;
        String last = "";
        while (System.nanoTime() < deadline) {
            try {
                List<Map<String, String>> infos = among.stream().map(TestCluster::status).toList();
                boolean agreed = infos.stream().allMatch(i -> i.get("cluster_known_nodes").equals("" + members)
                        && i.get("kvtier_serving").equals("1") && i.get("kvtier_slots_importing").equals("0")
                        && "0".equals(i.get("kvtier_rebalance_pending")) && "0".equals(i.get("kvtier_slots_fenced")))
                        && infos.stream().map(i -> i.get("cluster_current_epoch")).distinct().count() == 1;
                if (agreed) {
                    return (System.nanoTime() - start) / 1_000_000;
                }
                last = infos.toString();
            } catch (RuntimeException notYet) {
                last = notYet.toString();
            }
            Thread.sleep(50);
        }
        throw new AssertionError("nodes did not agree on " + members + " members within " + timeoutMillis
                + " ms; last: " + last);
    }

    /** Waits until every node in {@code among} serves a table of {@code members} members (imports may go on). */
    long awaitMembers(int members, long timeoutMillis, List<KvtierProcess> among) throws InterruptedException {
        long start = System.nanoTime();
        while ((System.nanoTime() - start) / 1_000_000 < timeoutMillis) {
            try {
                if (among.stream().map(TestCluster::status).allMatch(i -> i.get("cluster_known_nodes")
                        .equals("" + members) && i.get("kvtier_serving").equals("1"))) {
                    return (System.nanoTime() - start) / 1_000_000;
                }
            } catch (RuntimeException notYet) {
                // a node busy or restarting
            }
            Thread.sleep(20);
        }
        throw new AssertionError("nodes did not serve " + members + " members within " + timeoutMillis + " ms");
    }

    /**
     * Waits until the nodes' JVMs have settled after their start: together they used under half a core over the last
     * half second (an idle three-node cluster uses about a third of one; just started, each JVM compiles on both
     * cores for seconds). Tests begin on a cluster as it runs, not on one still compiling itself: on this 2-core
     * machine the first writes after forming, replicated to a backup that had not had a core for a second, answered
     * -UNREPLICATED (its peer timeout) in four tests of one CI run. Returns the ms waited; at most
     * {@code timeoutMillis}, then the tests go on regardless.
     */
    long awaitSettled(long timeoutMillis) throws InterruptedException {
        long start = System.nanoTime();
        long last = cpuNanos();
        while ((System.nanoTime() - start) / 1_000_000 < timeoutMillis) {
            Thread.sleep(500);
            long now = cpuNanos();
            if (now - last < 250_000_000L) {
                break;
            }
            last = now;
        }
        return (System.nanoTime() - start) / 1_000_000;
    }

    /** The CPU time the live nodes' JVMs have used so far. */
    private long cpuNanos() {
        long sum = 0;
        for (KvtierProcess p : live()) {
            sum += ProcessHandle.of(p.javaPid()).flatMap(h -> h.info().totalCpuDuration())
                    .map(java.time.Duration::toNanos).orElse(0L);
        }
        return sum;
    }

    long awaitAgreement(int members, long timeoutMillis) throws InterruptedException {
        return awaitAgreement(members, timeoutMillis, live());
    }

    @Override
    public void close() throws InterruptedException {
        for (KvtierProcess p : nodes) {
            p.close();
        }
        for (KvtierProcess p : retired) {
            p.close();
        }
    }
}
