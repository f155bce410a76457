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
import org.junit.jupiter.api.Tag;
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
 * every route again, the time to full service and each key's longest time without a successful call printed; final
 * reads of every key; check): kill -9 and restart; SIGSTOP and SIGCONT; restart-then-kill (n2 killed and restarted,
 * n3 killed within a second: when both owners of a slot crashed, the operator accepts the loss, as below); a full
 * restart (SIGTERM to every node at once, all restarted: every acknowledged write must be back); kill -9 of every node
 * (the register's values were only in memory: the operator accepts the loss with KVT.ACCEPTLOSS, keys written before
 * the crash may come back absent but never with a value nobody wrote, and the workload goes on with fresh keys); a
 * node replaced with an empty disk (same id); a node replaced by one with a new id ({@code kvtier cluster replace});
 * a rolling restart; on five nodes, scale-in then kill (two nodes drained with {@code kvtier cluster drain} and
 * stopped, then one of the remaining three killed: the other two serve every slot, printed; the two come back with
 * empty disks); and, with each node in a network namespace of its own ({@link NetworkNamespaces}), silent partitions
 * between nodes, the clients still reaching every node: restart-while-partitioned (n3 killed, cut off from its peers,
 * restarted, healed 3 s later); the Raft leader cut off; one node cut off; a majority/minority split; a bridge (n1
 * reaches both sides of a split); a two-step cut held {@value #TWO_STEP_MS} ms (n1 cut from the upper half, then from
 * the rest). Where namespaces cannot be made (not root, no iproute2) the cluster runs on loopback and the partition
 * nemeses are skipped, saying so.
 *
 * <p>On three nodes only, skewed clocks: leases assume bounded drift (monotonic clocks within 2% of each other) and
 * nothing of wall clocks (ADR 0005), so n2 is killed and restarted under libfaketime ({@code faketime -f '+90s
 * x1.01'}: its wall clock 90 s ahead and every clock 1% fast), then n3 under {@code faketime -f '-90s'} (90 s behind,
 * 180 s from n2), each back in the cluster before the next step, the workload running through both routes; the heal
 * restarts both without faketime. Each skewed node's {@code INFO server_time_usec} must show its offset. Where
 * {@code faketime} is missing the phase is skipped, saying so. Its fault time is the default profile's in both
 * profiles.
 *
 * <p>Tiers (README "Tests"): the default tier runs {@link #QUICK} on three nodes (about 1.5 minutes); the long tier
 * ({@code -Plong}) runs every nemesis on three nodes (about 5 minutes on 2 cores) and on five (about 7).
 * {@code -Dnemesis.only=NAME,...} runs only the nemeses named, in either tier; {@code -Dnemesis.logs=DIR} keeps each
 * phase's node logs. Profiles, chosen with {@code -Dnemesis.profile}: {@code default} runs each nemesis once with a
 * 4 s fault; {@code long} runs every nemesis three times with a 12 s fault and a longer workload between; {@code off}
 * skips the suite, saying so. Run it alone with {@code ./mvnw -B -pl kvtier-it -am verify -Plong -Dtest=NONE
 * -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=ClusterNemesisIT}.
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
    static final long TWO_STEP_MS = 24_000;
    /**
     * The test tier (README "Tests"): the default tier runs the {@link #QUICK} nemeses on 3 nodes; the long one
     * ({@code -Plong}) every nemesis on 3 and 5 nodes.
     */
    static final boolean LONG_TIER = "long".equals(System.getProperty("kvtier.tier"));
    static final java.util.Set<String> QUICK = java.util.Set.of("kill -9", "SIGSTOP", "full restart", "one node cut");
    /** {@code -Dnemesis.only=NAME[,NAME...]}: only these nemeses (by name, e.g. "cut Raft leader"), in any tier. */
    static final java.util.Set<String> ONLY = java.util.Arrays.stream(System.getProperty("nemesis.only", "")
            .split(",")).map(String::strip).filter(x -> !x.isEmpty()).collect(java.util.stream.Collectors.toSet());
    /** {@code -Dnemesis.logs=DIR}: each phase's node logs are copied to DIR/PHASE/ (they go with the temp dir). */
    static final String LOGS = System.getProperty("nemesis.logs", "");
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
    @Tag("long")
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

    /**
     * Called by a fault that stops every node uncleanly, once all are down: the workloads move on to fresh keys (what
     * the crash lost is no anomaly; see the nemesis "kill -9 of every node").
     */
    private static volatile Runnable crashed = () -> { };

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
                    // n2 crashes and comes back; before it has copied back what it lost, n3 crashes too. The slots
                    // both own lost their complete copies (the register's tiny values are only ever in memory): they
                    // wait for an operator, who accepts the loss, and the keys written before are checked as after
                    // a total crash. When n2 was quick enough nothing waits and every key is checked as usual.
                    c.nodes.get(1).kill();
                    c.nodes.get(1).restart();
                    Thread.sleep(ThreadLocalRandom.current().nextInt(1_000));
                    c.nodes.get(2).kill();
                    Thread.sleep(FAULT_MS);
                    c.nodes.get(2).restart();
                    if (acceptLoss(c, n)) {
                        crashed.run();
                    }
                }),
                new Nemesis("full restart", Needs.NOTHING, (c, ns, n) -> {
                    // SIGTERM to every node at once, as a node-pool upgrade or a redeploy does; all come back with
                    // their data directories and keep every acknowledged write.
                    parallel(c.nodes, KvtierProcess::stop);
                    parallel(c.nodes, KvtierProcess::restart);
                }),
                new Nemesis("kill -9 of every node", Needs.NOTHING, (c, ns, n) -> {
                    // Every copy stops uncleanly: what was only in memory is gone (the register's tiny values all
                    // were), so keys written before may come back absent; every slot waits for an operator, who
                    // accepts the loss. Keys written after the crash start afresh and are checked as usual, those
                    // before for holding nothing that nobody wrote.
                    parallel(c.nodes, KvtierProcess::kill);
                    crashed.run();
                    parallel(c.nodes, KvtierProcess::restart);
                    acceptLoss(c, n);
                }),
                new Nemesis("replace with an empty disk", Needs.NOTHING, (c, ns, n) -> {
                    // A node's disk is lost: the same id comes back with an empty data directory and copies its
                    // slots back from their other owners.
                    KvtierProcess node = c.nodes.get(1);
                    node.kill();
                    deleteTree(node.dir());
                    java.nio.file.Files.createDirectories(node.dir());
                    node.restart();
                }),
                new Nemesis("replace by a new id", Needs.NOTHING, (c, ns, n) -> {
                    // A machine is gone for good: a node with a new id joins, and the operator replaces the dead
                    // member by it (kvtier cluster replace OLD, which forgets OLD and waits until every slot is
                    // complete again).
                    String old = TestCluster.status(c.nodes.get(1)).get("kvtier_node_id");
                    c.nodes.get(1).kill();
                    KvtierProcess fresh = c.replaceWithNew(1);
                    // Serving means included: a member beside the others (the dead one is down, not counted).
                    c.awaitMembers(n, FULL_SERVICE_LIMIT_MS, List.of(fresh));
                    long deadline = System.nanoTime() + FULL_SERVICE_LIMIT_MS * 1_000_000;
                    while (!("," + TestCluster.status(c.nodes.getFirst()).getOrDefault("kvtier_down_ids", ""))
                            .contains("," + old + "(")) { // its failure detected
                        assertThat(System.nanoTime()).as(old + " down").isLessThan(deadline);
                        Thread.sleep(100);
                    }
                    cli(c.nodes.getFirst(), "replace", old);
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
                    cutFrom(c, ns, 2, IntStream.range(0, n).filter(i -> i != 2).toArray());
                    c.nodes.get(2).restartUnjoined(); // cut off, it cannot join: it answers -LOADING
                    Thread.sleep(3_000);
                    ns.healCuts();
                }),
                new Nemesis("cut Raft leader", Needs.NAMESPACES, (c, ns, n) -> {
                    int leader = leaderIndex(c, n);
                    cutFrom(c, ns, leader, IntStream.range(0, n).filter(i -> i != leader).toArray());
                    Thread.sleep(FAULT_MS);
                    ns.healCuts();
                }),
                new Nemesis("one node cut", Needs.NAMESPACES, (c, ns, n) -> {
                    cutFrom(c, ns, n - 1, IntStream.range(0, n - 1).toArray());
                    Thread.sleep(FAULT_MS);
                    ns.healCuts();
                }),
                new Nemesis("majority/minority split", Needs.NAMESPACES, (c, ns, n) -> {
                    int minority = (n - 1) / 2; // nodes 0..minority-1 against the rest
                    for (int a = 0; a < minority; a++) {
                        cutFrom(c, ns, a, IntStream.range(minority, n).toArray());
                    }
                    Thread.sleep(FAULT_MS);
                    ns.healCuts();
                }),
                new Nemesis("bridge", Needs.NAMESPACES, (c, ns, n) -> {
                    // n1 reaches everyone; the others split in two halves that do not reach each other.
                    int half = 1 + (n - 1) / 2;
                    for (int a = 1; a < half; a++) {
                        cutFrom(c, ns, a, IntStream.range(half, n).toArray());
                    }
                    Thread.sleep(FAULT_MS);
                    ns.healCuts();
                }),
                new Nemesis("two-step cut", Needs.NAMESPACES, (c, ns, n) -> {
                    // n1 loses the upper half, then the rest too; held TWO_STEP_MS in every profile (the cut that
                    // once left a connected majority of voters without a common view, and nothing committed).
                    int half = 1 + (n - 1) / 2;
                    cutFrom(c, ns, 0, IntStream.range(half, n).toArray());
                    Thread.sleep(TWO_STEP_MS / 2);
                    cutFrom(c, ns, 0, IntStream.range(1, half).toArray());
                    Thread.sleep(TWO_STEP_MS / 2);
                    ns.healCuts();
                })));
        if (size >= 5) {
            all.add(new Nemesis("scale-in then kill", Needs.NOTHING, (c, ns, n) -> {
                // kubectl scale from n to n-2: the two highest ordinals drain (kvtier cluster drain: they leave the
                // table and the Raft voters, the others copy their slots) and stop; then one of the remaining nodes
                // is killed, and the others still make a majority and serve every key. Afterwards the two come back
                // with empty disks and join as new members (scale-out).
                List<KvtierProcess> leaving = List.copyOf(c.nodes.subList(n - 2, n));
                List<KvtierProcess> staying = List.copyOf(c.nodes.subList(0, n - 2));
                for (KvtierProcess node : leaving) {
                    cli(node, "drain", "--wait-limit", "60s");
                    node.stop();
                }
                c.awaitAgreement(n - 2, FULL_SERVICE_LIMIT_MS, staying);
                KvtierProcess victim = staying.getLast();
                victim.kill();
                long killed = System.nanoTime();
                long served = awaitWritesToEverySlot(staying.getFirst(), 15_000);
                System.out.printf("scaled in to %d, then kill -9 of one: the others served writes to every slot %.2f"
                        + " s after the kill%n", n - 2, (served - killed) / 1e9);
                Thread.sleep(Math.max(0, FAULT_MS - (served - killed) / 1_000_000));
                victim.restart();
                c.awaitAgreement(n - 2, FULL_SERVICE_LIMIT_MS, staying);
                for (KvtierProcess node : leaving) {
                    deleteTree(node.dir());
                    java.nio.file.Files.createDirectories(node.dir());
                }
                parallel(leaving, KvtierProcess::restart);
            }));
        }
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

    /** Runs {@code action} on every node at once, a thread each; waits for all, rethrowing the first failure. */
    private static void parallel(List<KvtierProcess> nodes, NodeAction action) throws Exception {
        List<java.util.concurrent.CompletableFuture<Void>> all = new ArrayList<>();
        for (KvtierProcess node : nodes) {
            all.add(java.util.concurrent.CompletableFuture.runAsync(() -> {
                try {
                    action.run(node);
                } catch (Exception e) {
                    throw new java.util.concurrent.CompletionException(e);
                }
            }, r -> Thread.ofPlatform().daemon().start(r)));
        }
        java.util.concurrent.CompletableFuture.allOf(all.toArray(java.util.concurrent.CompletableFuture[]::new)).join();
    }

    @FunctionalInterface
    private interface NodeAction {
        void run(KvtierProcess node) throws Exception;
    }

    /**
     * As an operator would: waits until every node serves and reports the slots that wait for a complete copy, then
     * accepts their loss (KVT.ACCEPTLOSS at the current epoch), again while any remain (a table change may void one).
     * Returns once every node serves with none waiting or importing: whether a loss was accepted.
     */
    private static boolean acceptLoss(TestCluster c, int n) throws Exception {
        boolean accepted = false;
        long deadline = System.nanoTime() + FULL_SERVICE_LIMIT_MS * 1_000_000L;
        while (System.nanoTime() < deadline) {
            java.util.Set<String> ranges = new java.util.TreeSet<>();
            long epoch = -1;
            boolean all = true;
            for (KvtierProcess node : c.nodes) {
                try {
                    java.util.Map<String, String> st = TestCluster.status(node);
                    all &= st.get("cluster_known_nodes").equals("" + n) && st.get("kvtier_serving").equals("1");
                    String w = st.getOrDefault("kvtier_slots_waiting", "");
                    if (!w.isEmpty()) {
                        ranges.addAll(List.of(w.split(",")));
                    }
                    epoch = Math.max(epoch, Long.parseLong(st.get("cluster_current_epoch")));
                } catch (RuntimeException e) {
                    all = false;
                }
            }
            if (all && ranges.isEmpty() && c.live().stream().allMatch(p -> "0".equals(TestCluster.status(p)
                    .get("kvtier_slots_importing")))) {
                return accepted;
            }
            if (all && !ranges.isEmpty()) {
                try (Jedis j = c.nodes.get(0).jedis(CLIENT_TIMEOUT_MS)) {
                    List<byte[]> args = new ArrayList<>();
                    args.add(Long.toString(epoch).getBytes());
                    ranges.forEach(r -> args.add(r.getBytes()));
                    Object count = j.sendCommand(() -> "KVT.ACCEPTLOSS".getBytes(), args.toArray(byte[][]::new));
                    if (count instanceof Long l && l > 0) {
                        accepted = true;
                        System.out.println("operator: accepted the loss of slots " + String.join(",", ranges));
                        Thread.sleep(1_000); // the owners' next import rounds see it
                    }
                } catch (RuntimeException e) {
                    // the table changed meanwhile: look again
                }
            }
            Thread.sleep(200);
        }
        throw new AssertionError("slots still wait for a copy, or nodes do not serve, " + FULL_SERVICE_LIMIT_MS
                + " ms after the restarts (accepted: " + accepted + ")");
    }

    /** Runs {@code kvtier cluster ARGS --host H --port P} against {@code node}, as an operator would; fails unless 0. */
    private static void cli(KvtierProcess node, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(KvtierProcess.ROOT.resolve("kvtier").toString(), "cluster"));
        cmd.addAll(List.of(args));
        cmd.addAll(List.of("--host", node.host(), "--port", Integer.toString(node.port())));
        Tools.Result r = Tools.run(Duration.ofSeconds(120), null, cmd);
        System.out.println("operator: kvtier cluster " + String.join(" ", args) + " (" + node.host() + ":"
                + node.port() + "): " + r.stdout().strip().replace("\n", "; "));
        assertThat(r.exitCode()).as("kvtier cluster " + String.join(" ", args) + ":\n" + r.stdout() + r.stderr())
                .isZero();
    }

    /**
     * Writes through {@code node} (its proxy) until one write to a key of each of 64 evenly spread slots succeeds in a
     * row; returns when (nanoTime). Fails after {@code limitMillis}.
     */
    private static long awaitWritesToEverySlot(KvtierProcess node, long limitMillis) throws InterruptedException {
        long deadline = System.nanoTime() + limitMillis * 1_000_000;
        List<String> keys = IntStream.range(0, 64).mapToObj(i -> "scale:{" + SLOT_TAGS.get(i * 256) + "}").toList();
        while (System.nanoTime() < deadline) {
            try (Jedis j = node.jedis(CLIENT_TIMEOUT_MS)) {
                boolean all = true;
                for (String key : keys) {
                    all &= "OK".equals(j.set(key, "v"));
                }
                if (all) {
                    return System.nanoTime();
                }
            } catch (RuntimeException notYet) {
                // refused or timed out: the cluster has not moved on yet
            }
            Thread.sleep(20);
        }
        throw new AssertionError("writes through " + node.host() + ":" + node.port() + " did not reach every slot "
                + "within " + limitMillis + " ms");
    }

    /** A hash tag for each slot: SLOT_TAGS.get(s) hashes to slot s. */
    private static final List<String> SLOT_TAGS = slotTags();

    private static List<String> slotTags() {
        String[] tags = new String[16384];
        int found = 0;
        for (int i = 0; found < tags.length; i++) {
            String tag = Integer.toString(i, 36);
            int slot = io.lettuce.core.cluster.SlotHash.getSlot(tag);
            if (tags[slot] == null) {
                tags[slot] = tag;
                found++;
            }
        }
        return List.of(tags);
    }

    /** The index of the node that leads the configuration's Raft group now. */
    private static int leaderIndex(TestCluster c, int n) {
        for (int i = 0; i < n; i++) {
            try {
                if ("1".equals(TestCluster.status(c.nodes.get(i)).get("kvtier_raft_leader"))) {
                    return i;
                }
            } catch (RuntimeException e) {
                // a node busy: ask the next
            }
        }
        return 0;
    }

    private static void deleteTree(Path dir) throws java.io.IOException {
        if (!java.nio.file.Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = java.nio.file.Files.walk(dir)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                java.nio.file.Files.delete(p);
            }
        }
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

    /** Cuts node {@code node} (an index in {@code c.nodes}) off from each of {@code others}, both ways. */
    private static void cutFrom(TestCluster c, NetworkNamespaces ns, int node, int... others) throws Exception {
        for (int other : others) {
            ns.cut(c.namespaceOf(node), c.namespaceOf(other));
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
        // Room for the nodes "replace by a new id" starts, one a round.
        NetworkNamespaces ns = namespaced ? NetworkNamespaces.create(n + ROUNDS) : null;
        TestCluster cluster;
        try {
            // The default peer timeout (TestCluster's is 2 s): calls end well within the clients' 2 s timeout.
            java.util.function.IntFunction<List<String>> flags = i -> List.of("--peer-timeout", "1s");
            cluster = namespaced ? TestCluster.startIn(ns, dir, n, ROUNDS, flags)
                    : TestCluster.startWith(dir, n, ROUNDS, flags);
        } catch (Exception | Error e) {
            if (ns != null) {
                ns.close();
            }
            throw e;
        }
        System.out.println("nemesis suite, " + n + " nodes, " + (LONG ? "long" : "default") + " profile, "
                + (!ONLY.isEmpty() ? "only " + ONLY : LONG_TIER ? "every nemesis" : "the default tier's " + QUICK
                + " (-Plong runs every nemesis)") + ": " + (namespaced
                ? "each node in a network namespace of its own" : "on loopback; network namespaces cannot be made here"
                + " (needs root and iproute2), so the partition nemeses are skipped"));
        long suiteStart = System.nanoTime();
        List<DynamicTest> tests = new ArrayList<>();
        for (int round = 1; round <= ROUNDS; round++) {
            for (Nemesis nemesis : nemeses(n)) {
                if (ONLY.isEmpty() ? !LONG_TIER && !QUICK.contains(nemesis.name()) : !ONLY.contains(nemesis.name())) {
                    continue;
                }
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
        crashed = () -> loads.forEach(Workload::newEra);
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
                long[] gaps = load.unavailability();
                lines.add(String.format("%s: full service %.2f s after the heal (%.2f s after the fault began); "
                        + "per-key unavailability: longest %.2f s, median %.2f s", load.route.name(),
                        (serviceAt - healedAt) / 1e9, (serviceAt - faultAt) / 1e9, gaps[0] / 1e3, gaps[1] / 1e3));
            }
            Thread.sleep(QUIET_MS);
            for (Workload load : loads) {
                load.stop();
            }
            for (Workload load : loads) {
                load.finalReads();
                if (!load.beforeCrash.isEmpty()) {
                    int[] counts = new int[2];
                    List<String> wrong = load.crashSurvivors(counts);
                    lines.add(String.format("%s: %d keys written before the crash whose loss was accepted: %d came "
                            + "back, %d lost (memory only), %d with a value nobody wrote", load.route.name(), load.beforeCrash.size(),
                            counts[0], counts[1], wrong.size()));
                    if (!wrong.isEmpty()) {
                        failures.add(load.route.name() + ": " + wrong.getFirst());
                    }
                }
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
            if (!LOGS.isEmpty()) {
                Path to = java.nio.file.Files.createDirectories(Path.of(LOGS, phase));
                for (KvtierProcess node : cluster.nodes) {
                    Path log = node.dir().resolveSibling(node.dir().getFileName() + ".log");
                    if (java.nio.file.Files.exists(log)) {
                        java.nio.file.Files.copy(log, to.resolve(log.getFileName()),
                                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                    }
                }
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
        /** Per key index: when an operation on it last succeeded, and the longest stretch without one (nanos). */
        private final java.util.concurrent.atomic.AtomicLongArray lastOk = new java.util.concurrent.atomic.AtomicLongArray(KEYS);
        private final java.util.concurrent.atomic.AtomicLongArray longestGap =
                new java.util.concurrent.atomic.AtomicLongArray(KEYS);
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final List<Thread> workers = new ArrayList<>();
        private int probes;

        Workload(String phase, Route route) {
            this.route = route;
            this.prefix = "jn:" + phase + ":" + (route instanceof ProxyRoute ? "p" : "c") + ":";
            long now = System.nanoTime();
            for (int k = 0; k < KEYS; k++) {
                lastOk.set(k, now);
            }
            int count = Math.max(WORKERS_PER_ROUTE, route.entryPoints());
            for (int w = 0; w < count; w++) {
                int worker = w;
                workers.add(Thread.ofPlatform().name("nemesis-" + route.name() + "-" + w).start(() -> work(worker)));
            }
        }

        /** Added to every key's generation from {@link #newEra} on: the keys after a total crash are fresh. */
        private volatile int era;
        /** The keys written before a total crash: checked for holding nothing nobody wrote, not for loss. */
        private final java.util.Set<String> beforeCrash = java.util.concurrent.ConcurrentHashMap.newKeySet();

        private String key(int k, int generation) {
            return prefix + k + ":" + (generation + era);
        }

        /** Every node stopped uncleanly: from now on the workers use fresh keys (see the field {@code era}). */
        void newEra() {
            beforeCrash.addAll(history.keys());
            era += 1_000_000;
        }

        private void work(int worker) {
            int counter = 0;
            ThreadLocalRandom random = ThreadLocalRandom.current();
            while (running.get()) {
                int k = random.nextInt(KEYS);
                String key = key(k, counts.getAndIncrement(k) / OPS_PER_KEY);
                String process = "w" + worker;
                boolean ok = random.nextBoolean() ? write(worker, process, key, process + ":" + counter++)
                        : read(worker, process, key, false);
                if (ok) {
                    long now = System.nanoTime();
                    long last = lastOk.getAndSet(k, now);
                    longestGap.accumulateAndGet(k, now - last, Math::max);
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

        /** The longest time any key went without a successful operation, and the median over keys, in ms. */
        long[] unavailability() {
            long now = System.nanoTime();
            long[] gaps = new long[KEYS];
            for (int k = 0; k < KEYS; k++) {
                gaps[k] = Math.max(longestGap.get(k), now - lastOk.get(k)) / 1_000_000;
            }
            java.util.Arrays.sort(gaps);
            return new long[] {gaps[KEYS - 1], gaps[KEYS / 2]};
        }

        /**
         * The keys written before a total crash, read once more: each holds nothing, or a value some client wrote to
         * it (what reached a disk before the crash; memory-only values are lost). Returns the keys that break this.
         */
        List<String> crashSurvivors(int[] counts) throws InterruptedException {
            List<String> wrong = new ArrayList<>();
            for (String key : beforeCrash) {
                String value = null;
                long deadline = System.nanoTime() + 15_000_000_000L;
                while (true) {
                    try {
                        value = route.get(0, key);
                        break;
                    } catch (Exception e) {
                        if (System.nanoTime() > deadline) {
                            throw new AssertionError(route.name() + ": no read of " + key + " within 15 s", e);
                        }
                        Thread.sleep(50);
                    }
                }
                String v = value;
                boolean written = v == null || history.ops(key).stream().anyMatch(o -> o.kind() == Op.Kind.WRITE
                        && v.equals(o.value()));
                counts[v == null ? 1 : 0]++;
                if (!written) {
                    wrong.add(key + " holds '" + v + "', which no client wrote");
                }
            }
            return wrong;
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
                if (beforeCrash.contains(key)) {
                    continue; // see crashSurvivors
                }
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
