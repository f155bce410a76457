package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kvtier.testkit.jepsen.Op;
import io.kvtier.testkit.jepsen.RegisterHistory;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisAdvancedClusterCommands;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.Function;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * A Jepsen-style suite: a register workload (unique values written, values read back) under nemeses, checked for
 * linearizability key by key ({@link io.kvtier.testkit.jepsen.RegisterChecker}, WGL) and for lost acknowledged
 * writes, on three and on five real nodes ({@code --replicas 1}). Each key is served through two routes at once,
 * on keys of their own: Lettuce's cluster client (slot routing, topology refresh) and plain connections to every node
 * (its proxy forwards). Every call is bounded ({@value #CLIENT_TIMEOUT_MS} ms) and classified: ok; fail when the
 * server says it did not run it (-TRYAGAIN, -CLUSTERDOWN, -LOADING, -MOVED, -ASK); info otherwise (timeouts, broken
 * connections, -UNREPLICATED, -UNREACHABLE, any other error), which may take effect at any later time or never.
 *
 * <p>Nemeses, each one phase (workload running; the fault; heal; wait until every key is writable and readable through
 * every route again, the time to full service printed; final reads of every key; check): kill -9 and restart;
 * SIGSTOP and SIGCONT; restart-then-kill (n2 killed and restarted, n3 killed within a second); a rolling restart; and,
 * with each node in a network namespace of its own ({@link NetworkNamespaces}), silent partitions between nodes, the
 * clients still reaching every node: restart-while-partitioned (n3 killed, cut off from its peers, restarted, healed
 * 3 s later); one node cut off; a majority/minority split; a bridge (n1 reaches both sides of a split); a two-step
 * cut (n1 cut from the last nodes, then from the rest). Where namespaces cannot be made (not root, no iproute2) the
 * cluster runs on loopback and the partition nemeses are skipped, saying so.
 *
 * <p>On three nodes only, skewed clocks: leases assume bounded drift (monotonic clocks within 2% of each other) and
 * nothing of wall clocks (ADR 0005), so n2 is killed and restarted under libfaketime ({@code faketime -f '+90s
 * x1.01'}: its wall clock 90 s ahead and every clock 1% fast), then n3 under {@code faketime -f '-90s'} (90 s behind,
 * 180 s from n2), each back in the cluster before the next step, the workload running through both routes; the heal
 * restarts both without faketime. Each skewed node's {@code INFO server_time_usec} must show its offset. Where
 * {@code faketime} is missing the phase is skipped, saying so. Its fault time is the default profile's in both
 * profiles.
 *
 * <p>Profiles, chosen with {@code -Dnemesis.profile}: {@code default} (about 6 minutes for both sizes on 2 cores, part
 * of the README's test command) runs each nemesis once with a 4 s fault; {@code long} runs every nemesis three times
 * with a 12 s fault and a longer workload between; {@code off} skips the suite, saying so. Run it alone with
 * {@code ./mvnw -B -pl kvtier-it -am verify -Dtest=NONE -Dsurefire.failIfNoSpecifiedTests=false
 * -Dit.test=ClusterNemesisIT}.
 * Keys move on to a fresh name after {@value #OPS_PER_KEY} operations, so each history the checker searches stays
 * small.
 */
class ClusterNemesisIT {
    static final String PROFILE = System.getProperty("nemesis.profile", "default");
    static final boolean LONG = "long".equals(PROFILE);
    static final int ROUNDS = LONG ? 3 : 1;
    static final long DEFAULT_FAULT_MS = 4_000;
    static final long FAULT_MS = LONG ? 12_000 : DEFAULT_FAULT_MS;
    static final long QUIET_MS = LONG ? 3_000 : 1_000;
    static final int CLIENT_TIMEOUT_MS = 2_000;
    static final int KEYS = 8;
    static final int OPS_PER_KEY = 150;
    static final int WORKERS_PER_ROUTE = 3;
    static final long FULL_SERVICE_LIMIT_MS = 60_000;
    /** The probes' connections come after the workers': worker indexes stay below this many times the node count. */
    static final int PROBE_CONNECTIONS = 2;

    @TempDir(cleanup = org.junit.jupiter.api.io.CleanupMode.ON_SUCCESS)
    Path tmp;

    @TestFactory
    Stream<DynamicTest> threeNodes() throws Exception {
        return suite(3);
    }

    @TestFactory
    Stream<DynamicTest> fiveNodes() throws Exception {
        return suite(5);
    }

    /** One nemesis: its name, what it needs of the machine, and the fault itself, which returns when it has healed. */
    private record Nemesis(String name, Needs needs, Fault fault) {
    }

    /** What a nemesis needs beyond the nodes themselves; a phase whose need is not met is skipped, saying why. */
    private enum Needs {
        NOTHING(""),
        NAMESPACES("network namespaces cannot be made here (needs root and iproute2)"),
        FAKETIME("faketime (libfaketime) is not installed");

        final String missing;

        Needs(String missing) {
            this.missing = missing;
        }
    }

    @FunctionalInterface
    private interface Fault {
        void run(TestCluster cluster, NetworkNamespaces ns, int n) throws Exception;
    }

    private static List<Nemesis> nemeses(int size) {
        List<Nemesis> all = new ArrayList<>(List.of(
                new Nemesis("kill -9", Needs.NOTHING, (c, ns, n) -> {
                    c.nodes.get(1).kill();
                    Thread.sleep(FAULT_MS);
                    c.nodes.get(1).restart();
                }),
                new Nemesis("SIGSTOP", Needs.NOTHING, (c, ns, n) -> {
                    c.nodes.get(1).signal("STOP");
                    Thread.sleep(FAULT_MS);
                    c.nodes.get(1).signal("CONT");
                }),
                new Nemesis("restart-then-kill", Needs.NOTHING, (c, ns, n) -> {
                    c.nodes.get(1).kill();
                    c.nodes.get(1).restart();
                    Thread.sleep(ThreadLocalRandom.current().nextInt(1_000));
                    c.nodes.get(2).kill();
                    Thread.sleep(FAULT_MS);
                    c.nodes.get(2).restart();
                }),
                new Nemesis("rolling restart", Needs.NOTHING, (c, ns, n) -> {
                    for (KvtierProcess node : c.nodes) {
                        node.stop();
                        node.restart();
                        c.awaitAgreement(n, FULL_SERVICE_LIMIT_MS, c.nodes);
                    }
                }),
                new Nemesis("restart-while-partitioned", Needs.NAMESPACES, (c, ns, n) -> {
                    c.nodes.get(2).kill();
                    cutFrom(ns, 2, IntStream.range(0, n).filter(i -> i != 2).toArray());
                    c.nodes.get(2).restartUnjoined(); // cut off, it cannot join: it answers -LOADING
                    Thread.sleep(3_000);
                    ns.healCuts();
                }),
                new Nemesis("one node cut", Needs.NAMESPACES, (c, ns, n) -> {
                    cutFrom(ns, n - 1, IntStream.range(0, n - 1).toArray());
                    Thread.sleep(FAULT_MS);
                    ns.healCuts();
                }),
                new Nemesis("majority/minority split", Needs.NAMESPACES, (c, ns, n) -> {
                    int minority = (n - 1) / 2; // nodes 0..minority-1 against the rest
                    for (int a = 0; a < minority; a++) {
                        cutFrom(ns, a, IntStream.range(minority, n).toArray());
                    }
                    Thread.sleep(FAULT_MS);
                    ns.healCuts();
                }),
                new Nemesis("bridge", Needs.NAMESPACES, (c, ns, n) -> {
                    // n1 reaches everyone; the others split in two halves that do not reach each other.
                    int half = 1 + (n - 1) / 2;
                    for (int a = 1; a < half; a++) {
                        cutFrom(ns, a, IntStream.range(half, n).toArray());
                    }
                    Thread.sleep(FAULT_MS);
                    ns.healCuts();
                }),
                new Nemesis("two-step cut", Needs.NAMESPACES, (c, ns, n) -> {
                    int half = 1 + (n - 1) / 2;
                    cutFrom(ns, 0, IntStream.range(half, n).toArray());
                    Thread.sleep(FAULT_MS / 2);
                    cutFrom(ns, 0, IntStream.range(1, half).toArray());
                    Thread.sleep(FAULT_MS / 2);
                    ns.healCuts();
                })));
        if (size == 3) {
            all.add(new Nemesis("skewed clocks", Needs.FAKETIME, (c, ns, n) -> {
                skew(c, n, 1, "+90s x1.01", 90);
                Thread.sleep(DEFAULT_FAULT_MS / 2);
                skew(c, n, 2, "-90s", -90);
                Thread.sleep(DEFAULT_FAULT_MS / 2);
                for (int i : new int[] {1, 2}) {
                    c.nodes.get(i).kill();
                    c.nodes.get(i).restart();
                    c.awaitAgreement(n, FULL_SERVICE_LIMIT_MS, c.nodes);
                }
            }));
        }
        return all;
    }

    /**
     * Kills node {@code i} and restarts it under {@code faketime -f spec}, checks that its wall clock is {@code
     * offsetSeconds} off the test's (within 10 s), and waits until every node agrees again, printing how long that
     * took.
     */
    private static void skew(TestCluster c, int n, int i, String spec, long offsetSeconds) throws Exception {
        KvtierProcess node = c.nodes.get(i);
        node.kill();
        long start = System.nanoTime();
        node.restartUnder(List.of("faketime", "-f", spec));
        long offsetMillis;
        try (Jedis j = node.jedis(CLIENT_TIMEOUT_MS)) {
            long before = System.currentTimeMillis();
            long usec = Long.parseLong(j.info("server").lines().filter(l -> l.startsWith("server_time_usec:"))
                    .findFirst().orElseThrow().substring("server_time_usec:".length()).trim());
            offsetMillis = usec / 1000 - (before + System.currentTimeMillis()) / 2;
        }
        assertThat(offsetMillis).as("n" + (i + 1) + "'s wall clock under faketime -f " + spec)
                .isBetween(offsetSeconds * 1000 - 10_000, offsetSeconds * 1000 + 10_000);
        long agreed = c.awaitAgreement(n, FULL_SERVICE_LIMIT_MS, c.nodes);
        System.out.printf("n%d restarted under faketime -f '%s' (wall clock %+.1f s): up after %.2f s, every node"
                + " agreeing again %.2f s later%n", i + 1, spec, offsetMillis / 1e3,
                (System.nanoTime() - start) / 1e9 - agreed / 1e3, agreed / 1e3);
    }

    /** Whether {@code faketime} runs here (libfaketime's launcher; .ci/run installs it). */
    private static boolean faketimeAvailable() {
        try {
            Process p = new ProcessBuilder("faketime", "-f", "+0s", "true").redirectErrorStream(true).start();
            p.getInputStream().transferTo(java.io.OutputStream.nullOutputStream());
            return p.waitFor(10, java.util.concurrent.TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (java.io.IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static void cutFrom(NetworkNamespaces ns, int node, int... others) throws Exception {
        for (int other : others) {
            ns.cut(node, other);
        }
    }

    /**
     * Starts an {@code n}-node cluster (in namespaces where they can be made) and returns one test per nemesis and
     * round, run in order against it; the stream's close stops the cluster.
     */
    private Stream<DynamicTest> suite(int n) throws Exception {
        if (!java.util.Set.of("default", "long", "off").contains(PROFILE)) {
            throw new IllegalArgumentException("-Dnemesis.profile=" + PROFILE + ": expected default, long or off");
        }
        assumeTrue(!"off".equals(PROFILE), "the nemesis suite is off (-Dnemesis.profile=off)");
        Path dir = java.nio.file.Files.createDirectories(tmp.resolve(n + "nodes"));
        boolean namespaced = NetworkNamespaces.available();
        boolean faketime = faketimeAvailable();
        NetworkNamespaces ns = namespaced ? NetworkNamespaces.create(n) : null;
        TestCluster cluster;
        try {
            // The default peer timeout (TestCluster's is 2 s): calls end well within the clients' 2 s timeout.
            java.util.function.IntFunction<List<String>> flags = i -> List.of("--peer-timeout", "1s");
            cluster = namespaced ? TestCluster.startIn(ns, dir, n, flags) : TestCluster.startWith(dir, n, 0, flags);
        } catch (Exception | Error e) {
            if (ns != null) {
                ns.close();
            }
            throw e;
        }
        System.out.println("nemesis suite, " + n + " nodes, " + (LONG ? "long" : "default") + " profile: " + (namespaced
                ? "each node in a network namespace of its own" : "on loopback; network namespaces cannot be made here"
                + " (needs root and iproute2), so the partition nemeses are skipped"));
        long suiteStart = System.nanoTime();
        List<DynamicTest> tests = new ArrayList<>();
        for (int round = 1; round <= ROUNDS; round++) {
            for (Nemesis nemesis : nemeses(n)) {
                String phase = n + "n-" + nemesis.name().replaceAll("[^a-z0-9]+", "-") + "-r" + round;
                tests.add(DynamicTest.dynamicTest(nemesis.name() + " (" + n + " nodes, round " + round + ")", () -> {
                    boolean met = switch (nemesis.needs()) {
                        case NOTHING -> true;
                        case NAMESPACES -> namespaced;
                        case FAKETIME -> faketime;
                    };
                    assumeTrue(met, nemesis.name() + ": skipped, " + nemesis.needs().missing);
                    runPhase(cluster, ns, n, nemesis, phase);
                }));
            }
        }
        return tests.stream().onClose(() -> {
            try {
                cluster.close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                if (ns != null) {
                    ns.close();
                }
                System.out.printf("nemesis suite, %d nodes: %.1f s%n", n, (System.nanoTime() - suiteStart) / 1e9);
            }
        });
    }

    private void runPhase(TestCluster cluster, NetworkNamespaces ns, int n, Nemesis nemesis, String phase)
            throws Exception {
        for (KvtierProcess node : cluster.nodes) {
            if (!node.isAlive()) { // a phase before this one failed half-way
                node.restart();
            }
        }
        cluster.awaitAgreement(n, FULL_SERVICE_LIMIT_MS, cluster.nodes);
        List<Route> routes = List.of(new ClusterRoute(cluster), new ProxyRoute(cluster));
        List<Workload> loads = routes.stream().map(r -> new Workload(phase, r)).toList();
        try {
            Thread.sleep(QUIET_MS);
            long faultAt = System.nanoTime();
            try {
                nemesis.fault().run(cluster, ns, n);
            } finally {
                if (ns != null) {
                    ns.healCuts();
                }
            }
            long healedAt = System.nanoTime();
            List<String> lines = new ArrayList<>();
            List<String> failures = new ArrayList<>();
            for (Workload load : loads) {
                long serviceAt = load.awaitFullService(FULL_SERVICE_LIMIT_MS);
                lines.add(String.format("%s: full service %.2f s after the heal (%.2f s after the fault began)",
                        load.route.name(), (serviceAt - healedAt) / 1e9, (serviceAt - faultAt) / 1e9));
            }
            Thread.sleep(QUIET_MS);
            for (Workload load : loads) {
                load.stop();
            }
            for (Workload load : loads) {
                load.finalReads();
                RegisterHistory.Verdict v = load.history.check();
                lines.add(String.format("%s: %d ok, %d fail, %d info over %d keys; %d non-linearizable keys (%d stale"
                        + " reads), %d acknowledged writes lost", load.route.name(), load.history.count(Op.Outcome.OK),
                        load.history.count(Op.Outcome.FAIL), load.history.count(Op.Outcome.INFO), v.keys(),
                        v.nonLinearizable(), v.badReads(), v.lost().size()));
                if (!v.clean()) {
                    lines.add("  " + (v.firstReport().isEmpty() ? "" : v.firstReport().replace("\n", "\n  ")));
                    v.lost().stream().limit(5).forEach(l -> lines.add("  lost: " + l));
                    failures.add(load.route.name() + ": " + (v.firstReport().isEmpty() ? v.lost().getFirst()
                            : v.firstReport().lines().findFirst().orElseThrow()));
                }
            }
            System.out.println("nemesis " + nemesis.name() + " (" + n + " nodes):\n  " + String.join("\n  ", lines));
            assertThat(failures).as("anomalies under " + nemesis.name() + " on " + n + " nodes:\n"
                    + String.join("\n", lines)).isEmpty();
        } finally {
            for (Workload load : loads) {
                load.stop();
            }
            for (Route route : routes) {
                route.close();
            }
        }
    }

    /** Where a worker's calls go: one client of the cluster, or a plain connection to the node it is given. */
    private interface Route extends AutoCloseable {
        String name();

        /** The value of {@code key}; null when it has none. */
        String get(int worker, String key) throws Exception;

        void set(int worker, String key, String value) throws Exception;

        /** The workers whose calls between them reach every entry point (every node for the proxy). */
        int entryPoints();

        @Override
        void close();
    }

    /**
     * Lettuce's cluster client, one connection shared by the workers, topology refreshed periodically and on errors.
     */
    private static final class ClusterRoute implements Route {
        private final RedisClusterClient client;
        private final StatefulRedisClusterConnection<String, String> connection;
        private final RedisAdvancedClusterCommands<String, String> sync;

        ClusterRoute(TestCluster cluster) {
            client = RedisClusterClient.create(cluster.nodes.stream()
                    .map(p -> RedisURI.builder().withHost(p.host()).withPort(p.port())
                            .withTimeout(Duration.ofMillis(CLIENT_TIMEOUT_MS)).build()).toList());
            client.setOptions(ClusterClientOptions.builder()
                    .timeoutOptions(TimeoutOptions.enabled(Duration.ofMillis(CLIENT_TIMEOUT_MS)))
                    .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                            .enablePeriodicRefresh(Duration.ofSeconds(1)).enableAllAdaptiveRefreshTriggers()
                            .build()).build());
            connection = client.connect();
            sync = connection.sync();
        }

        @Override
        public String name() {
            return "cluster client";
        }

        @Override
        public String get(int worker, String key) {
            return sync.get(key);
        }

        @Override
        public void set(int worker, String key, String value) {
            sync.set(key, value);
        }

        @Override
        public int entryPoints() {
            return 1;
        }

        @Override
        public void close() {
            connection.close();
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    /** Plain Jedis connections, worker i to node i mod n (so every node's proxy is used), reopened after an error. */
    private static final class ProxyRoute implements Route {
        private final TestCluster cluster;
        private final Jedis[] connections = new Jedis[64];

        ProxyRoute(TestCluster cluster) {
            this.cluster = cluster;
        }

        @Override
        public String name() {
            return "proxy";
        }

        private synchronized Jedis connection(int worker) {
            if (connections[worker] == null) {
                KvtierProcess node = cluster.nodes.get(worker % cluster.nodes.size());
                connections[worker] = new Jedis(node.host(), node.port(), CLIENT_TIMEOUT_MS);
            }
            return connections[worker];
        }

        private synchronized void drop(int worker) {
            if (connections[worker] != null) {
                connections[worker].close();
                connections[worker] = null;
            }
        }

        private <T> T call(int worker, Function<Jedis, T> command) {
            try {
                return command.apply(connection(worker));
            } catch (JedisDataException serverSaid) {
                throw serverSaid;
            } catch (RuntimeException broken) {
                drop(worker);
                throw broken;
            }
        }

        @Override
        public String get(int worker, String key) {
            return call(worker, j -> j.get(key));
        }

        @Override
        public void set(int worker, String key, String value) {
            String reply = call(worker, j -> j.set(key, value));
            if (!"OK".equals(reply)) {
                throw new IllegalStateException("SET answered " + reply);
            }
        }

        @Override
        public int entryPoints() {
            return cluster.nodes.size();
        }

        @Override
        public synchronized void close() {
            for (int i = 0; i < connections.length; i++) {
                drop(i);
            }
        }
    }

    /**
     * An error's outcome: fail when the server said the command did not run, info otherwise (it may have run, or may
     * still).
     */
    static Op.Outcome classify(Exception e) {
        String message = e.getMessage() == null ? "" : e.getMessage();
        boolean serverError = e instanceof JedisDataException || e instanceof RedisCommandExecutionException;
        if (serverError && Stream.of("TRYAGAIN", "CLUSTERDOWN", "LOADING", "MOVED", "ASK ").anyMatch(
                message::startsWith)) {
            return Op.Outcome.FAIL;
        }
        return Op.Outcome.INFO;
    }

    /**
     * Workers writing unique values (worker:counter) to and reading {@value #KEYS} keys through one route, recording
     * every call; after {@value #OPS_PER_KEY} operations a key moves on to a fresh name (its next generation).
     */
    private static final class Workload {
        final Route route;
        final RegisterHistory history = new RegisterHistory();
        private final String prefix;
        private final AtomicIntegerArray counts = new AtomicIntegerArray(KEYS);
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final List<Thread> workers = new ArrayList<>();
        private int probes;

        Workload(String phase, Route route) {
            this.route = route;
            this.prefix = "jn:" + phase + ":" + (route instanceof ProxyRoute ? "p" : "c") + ":";
            int count = Math.max(WORKERS_PER_ROUTE, route.entryPoints());
            for (int w = 0; w < count; w++) {
                int worker = w;
                workers.add(Thread.ofPlatform().name("nemesis-" + route.name() + "-" + w).start(() -> work(worker)));
            }
        }

        private String key(int k, int generation) {
            return prefix + k + ":" + generation;
        }

        private void work(int worker) {
            int counter = 0;
            ThreadLocalRandom random = ThreadLocalRandom.current();
            while (running.get()) {
                int k = random.nextInt(KEYS);
                String key = key(k, counts.getAndIncrement(k) / OPS_PER_KEY);
                String process = "w" + worker;
                if (random.nextBoolean()) {
                    write(worker, process, key, process + ":" + counter++);
                } else {
                    read(worker, process, key, false);
                }
                try {
                    Thread.sleep(random.nextInt(2, 8));
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        private boolean write(int worker, String process, String key, String value) {
            long invoke = System.nanoTime();
            try {
                route.set(worker, key, value);
                history.add(key, Op.write(process, value, invoke, System.nanoTime(), Op.Outcome.OK));
                return true;
            } catch (Exception e) {
                history.add(key, Op.write(process, value, invoke, System.nanoTime(), classify(e)));
                return false;
            }
        }

        /** Reads {@code key}; true if the read succeeded. */
        private boolean read(int worker, String process, String key, boolean last) {
            long invoke = System.nanoTime();
            try {
                String value = route.get(worker, key);
                Op op = Op.read(process, value, invoke, System.nanoTime(), Op.Outcome.OK);
                if (last) {
                    history.addFinalRead(key, op);
                } else {
                    history.add(key, op);
                }
                return true;
            } catch (Exception e) {
                history.add(key, Op.read(process, null, invoke, System.nanoTime(), classify(e)));
                return false;
            }
        }

        /**
         * Waits until one pass writes and reads back every key through every entry point of the route (recorded like
         * the workers' calls, as process "probe"); returns when that pass ended.
         */
        long awaitFullService(long limitMillis) throws InterruptedException {
            long deadline = System.nanoTime() + limitMillis * 1_000_000;
            while (System.nanoTime() < deadline) {
                boolean all = true;
                for (int entry = 0; entry < route.entryPoints() && all; entry++) {
                    int connection = PROBE_CONNECTIONS * route.entryPoints() + entry; // entry point = index mod n
                    for (int k = 0; k < KEYS && all; k++) {
                        String key = key(k, counts.get(k) / OPS_PER_KEY);
                        all = write(connection, "probe", key, "probe:" + probes++)
                                && read(connection, "probe", key, false);
                    }
                }
                if (all) {
                    return System.nanoTime();
                }
                Thread.sleep(20);
            }
            throw new AssertionError(route.name() + ": not every key writable and readable again within "
                    + limitMillis + " ms of the heal");
        }

        void stop() throws InterruptedException {
            running.set(false);
            for (Thread t : workers) {
                t.join();
            }
        }

        /** Reads every key this workload used, once more, as the final reads (retried until they succeed). */
        void finalReads() throws InterruptedException {
            for (String key : history.keys()) {
                long deadline = System.nanoTime() + 15_000_000_000L;
                while (!read(0, "final", key, true)) {
                    if (System.nanoTime() > deadline) {
                        throw new AssertionError(route.name() + ": no final read of " + key + " within 15 s");
                    }
                    Thread.sleep(50);
                }
            }
        }
    }
}
