package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/**
 * Issue 4's fault tests on real node processes: kill -9 under load, a SIGSTOPped node, a fourth node joining under
 * load, and a node restarting with its data directory. Three nodes, --replicas 1, --replication sync, failure timeout
 * 2 s, peer timeout 1 s. No proxied call, retries included, may take longer than the peer timeout.
 */
class ClusterFailoverIT {
    /**
     * The peer timeout (1 s), which bounds a proxied call with its retries, plus as much again for what the client's
     * and the node's threads may wait for a core on this 2-core machine running three or four nodes, the load and the
     * test: 1.6-1.8 s seen with a node SIGSTOPped (2026-11-28), where 1.5 s had been enough before. A call that hung
     * would wait for the client's 10 s socket timeout.
     */
    private static final long MAX_CALL_MILLIS = 2_000;
    /** The default peer timeout, 1 s, which the bounds here are measured against (TestCluster's is 2 s). */
    private static final java.util.function.IntFunction<List<String>> DEFAULT_PEER_TIMEOUT =
            i -> List.of("--peer-timeout", "1s");

    @TempDir
    Path tmp;

    /**
     * Kills the configuration's Raft leader, the slowest failover: the others see the view change, elect a leader, and
     * that leader waits a lease from its election before it excludes the dead node (a member's silence while there was
     * no leader says nothing: ADR 0005).
     */
    @Test
    @Tag("long") // the default tier's nemesis kill -9 covers it
    void killNineLosesNoAcknowledgedWrite() throws Exception {
        try (TestCluster cluster = TestCluster.startWith(tmp, 3, 0, DEFAULT_PEER_TIMEOUT)) {
            KvtierProcess victim = cluster.nodes.get(ClusterPartitionIT.leaderIndex(cluster));
            List<KvtierProcess> survivors = cluster.nodes.stream().filter(n -> n != victim).toList();
            LoadGenerator load = new LoadGenerator(cluster::live, 6, true);
            Thread.sleep(3_000);
            long writesBefore = load.writes.get();
            long killedAt = System.nanoTime();
            victim.kill();
            // The dead node's keys are readable again once every key acknowledged before the kill has been read back.
            KvtierProcess survivor = survivors.get(0);
            long readableAfter = load.readableAfter(survivor, killedAt, 15_000);
            Thread.sleep(3_000);
            load.close();
            System.out.printf("kill -9 of the Raft leader: every acknowledged write readable again %d ms after the kill;"
                    + " %d writes before, %d after; %d errors during failover; longest call %d ms%n", readableAfter,
                    writesBefore, load.writes.get() - writesBefore, load.errors.get(), load.maxCallMillis.get());
            // The view change (FD_SOCK2 sees the socket close, VERIFY_SUSPECT2 up to 250 ms: 0.4-0.65 s here), the
            // election, the new leader's wait of a lease (--lease 1 s, x 1.02) from its election before it excludes
            // the dead node, the exclusion's commit and the new table's install on both survivors (0.05-0.3 s), the
            // survivors' confirmations before a new primary serves a handed-over slot (0.1-0.5 s), and the reads:
            // 2.3-2.5 s alone on this 2-core machine (three node JVMs, the load, 130 probe connections and the test
            // share it; 2026-11-28), 3.0 s in a CI run when the victim was any node, before held writes were woken by
            // a new table (ClusterNode#retry). The bound leaves 1.5 s over that for a slower or busier CI machine.
            assertThat(readableAfter).as("ms until the killed node's keys were readable").isBetween(0L, 4_000L);
            assertThat(load.wrong).isEmpty();
            assertThat(load.wrongReads.get()).isZero();
            for (KvtierProcess n : survivors) {
                assertThat(load.verifyAll(n)).as("acknowledged writes lost, read through port " + n.port()).isEmpty();
            }
            assertThat(load.maxCallMillis.get()).isLessThan(MAX_CALL_MILLIS);
            assertThat(load.writes.get() - writesBefore).as("writes after the kill").isPositive();
            cluster.awaitAgreement(2, 10_000, survivors);
        }
    }

    @Test
    void slotsWhoseOwnersAreAllDownAnswerClusterDownAtOnce() throws Exception {
        try (TestCluster cluster = TestCluster.startWith(tmp, 3, 0, DEFAULT_PEER_TIMEOUT)) {
            KvtierProcess survivor = cluster.nodes.get(0);
            cluster.nodes.get(1).kill();
            cluster.nodes.get(2).kill();
            long killedAt = System.nanoTime();
            // Until the survivor's failure detection excludes both, a call may wait for a dead owner (the peer timeout
            // at most); then every slot's owners are gone from its view and it answers at once.
            try (Jedis j = new Jedis("127.0.0.1", survivor.port(), 10_000)) {
                String reply = "";
                long longest = 0;
                while (!reply.startsWith("CLUSTERDOWN") && (System.nanoTime() - killedAt) / 1_000_000 < 15_000) {
                    long started = System.nanoTime();
                    try {
                        reply = j.set("down:key", "v");
                    } catch (redis.clients.jedis.exceptions.JedisDataException e) {
                        reply = e.getMessage();
                    }
                    longest = Math.max(longest, (System.nanoTime() - started) / 1_000_000);
                }
                long down = (System.nanoTime() - killedAt) / 1_000_000;
                assertThat(reply).startsWith("CLUSTERDOWN");
                long started = System.nanoTime();
                for (int i = 0; i < 100; i++) {
                    String key = "down:" + i;
                    assertThat(catching(() -> j.get(key))).startsWith("CLUSTERDOWN");
                }
                long perCall = (System.nanoTime() - started) / 1_000_000 / 100;
                System.out.printf("two of three killed: CLUSTERDOWN %d ms later; longest call before %d ms; then %d ms"
                        + " per call%n", down, longest, perCall);
                assertThat(longest).isLessThan(MAX_CALL_MILLIS);
                assertThat(perCall).as("ms per refused call").isLessThan(50);
            }
        }
    }

    private static String catching(java.util.concurrent.Callable<String> call) throws Exception {
        try {
            return call.call();
        } catch (redis.clients.jedis.exceptions.JedisDataException e) {
            return e.getMessage();
        }
    }

    @Test
    @Tag("long") // the default tier's nemesis SIGSTOP covers it
    void pausedNodeIsDetectedAndRejoinsWithoutDoubleOwnership() throws Exception {
        try (TestCluster cluster = TestCluster.startWith(tmp, 3, 0, DEFAULT_PEER_TIMEOUT)) {
            KvtierProcess paused = cluster.nodes.get(2);
            List<KvtierProcess> others = cluster.nodes.subList(0, 2);
            LoadGenerator load = new LoadGenerator(() -> others, 4, true);
            Thread.sleep(1_000);
            paused.signal("STOP");
            long detected = cluster.awaitMembers(2, 15_000, others);
            System.out.printf("SIGSTOP: the others served 2 members %d ms later (failure timeout %s)%n", detected,
                    TestCluster.FAILURE_TIMEOUT);
            // A paused Raft leader: the failure timeout (2 s), the election, then the new leader waits one lease
            // (1 s x 1.02) from its election before it excludes the paused node (ADR 0005): 3.8-4.2 s here. Another
            // node: one lease after its last renewal. Then 1 s of room on this 2-core machine.
            assertThat(detected).isLessThan(2_000 + 1_020 + 2_000);
            Thread.sleep(1_000);
            paused.signal("CONT");
            long rejoined = cluster.awaitAgreement(3, 60_000, cluster.nodes);
            System.out.printf("SIGCONT: all three agree again %d ms later%n", rejoined);
            Thread.sleep(1_000);
            load.close();
            // One owner table everywhere: equal epochs (awaited above) and equal primary counts per member.
            List<String> primaries = cluster.nodes.stream().map(n -> TestCluster.status(n).entrySet().stream()
                    .filter(e -> e.getKey().startsWith("kvtier_member_")).map(e -> e.getKey() + "=" + e.getValue())
                    .sorted().toList().toString()).distinct().toList();
            assertThat(primaries).hasSize(1);
            assertThat(load.wrong).isEmpty();
            assertThat(load.maxCallMillis.get()).as("longest call while a node was hung").isLessThan(MAX_CALL_MILLIS);
            for (KvtierProcess n : cluster.nodes) {
                assertThat(load.verifyAll(n)).as("reads through " + n.port()).isEmpty();
            }
        }
    }

    /**
     * A fourth node joins while four threads read and write through the first three. Nothing read is wrong, no
     * acknowledged write is lost, and every call ends within {@link #MAX_CALL_MILLIS}. A few reads of the slots
     * moving to the new node may fail, said plainly (TRYAGAIN: not run; UNREACHABLE: no answer within the peer
     * timeout): the old owners hand a slot over as soon as they apply the new table, while the new node, a JVM started
     * seconds ago, still applies it, awaits its first lease and warms up; on this 2-core machine running four nodes
     * and the load it answered some calls only after the peer timeout (1-3 of about 2,000 reads). README, "Limits"
     * says so; a join that makes the new node a backup first and its primary once it has imported is the way to none.
     */
    @Test
    void fourthNodeJoinsUnderLoadWithoutWrongReadsOrLostWrites() throws Exception {
        try (TestCluster cluster = TestCluster.startWith(tmp, 3, 1, DEFAULT_PEER_TIMEOUT)) {
            List<KvtierProcess> first = List.copyOf(cluster.nodes);
            LoadGenerator writers = new LoadGenerator(() -> first, 2, true);
            Thread.sleep(2_000);
            writers.close();
            // Readers of what the writers left, and fresh writers, while the fourth node joins.
            LoadGenerator load = new LoadGenerator(() -> first, 4, true);
            Thread.sleep(1_000);
            long joinStart = System.nanoTime();
            cluster.add();
            long settled = cluster.awaitAgreement(4, 60_000);
            Thread.sleep(1_000);
            load.close();
            System.out.printf("join: 4 nodes agreed %d ms after the fourth started (%d ms in all); %d reads, %d writes,"
                    + " %d errors (writes refused while slots moved), %d failed reads %s, longest call %d ms%n",
                    settled, (System.nanoTime() - joinStart) / 1_000_000, load.reads.get(), load.writes.get(),
                    load.errors.get(), load.failedReads.get(), load.readFailures, load.maxCallMillis.get());
            assertThat(load.wrong).isEmpty();
            assertThat(load.wrongReads.get()).isZero();
            for (KvtierProcess n : cluster.nodes) {
                assertThat(load.verifyAll(n)).as("acknowledged writes lost").isEmpty();
                assertThat(writers.verifyAll(n)).as("acknowledged writes lost").isEmpty();
            }
            assertThat(load.readFailures).as("failed reads say they did not run or got no answer in time")
                    .allMatch(f -> f.contains("read failed: TRYAGAIN ") || f.contains("read failed: UNREACHABLE "));
            assertThat(load.failedReads.get() * 100).as("failed reads, in %% of %d", load.reads.get())
                    .isLessThanOrEqualTo(load.reads.get());
            assertThat(load.maxCallMillis.get()).isLessThan(MAX_CALL_MILLIS);
            assertThat(TestCluster.status(cluster.nodes.get(3)).get("kvtier_slots_primary")).isNotEqualTo("0");
        }
    }

    @Test
    void survivorOfATwoNodeClusterKeepsItsDataWhenItsPeerComesBack() throws Exception {
        try (TestCluster cluster = TestCluster.startWith(tmp, 2, 0, DEFAULT_PEER_TIMEOUT)) {
            KvtierProcess survivor = cluster.nodes.get(0);
            KvtierProcess peer = cluster.nodes.get(1);
            int n = 200;
            try (Jedis j = new Jedis("127.0.0.1", survivor.port(), 10_000)) {
                for (int i = 0; i < n; i++) {
                    assertThat(j.set("two" + i, "v" + i)).isEqualTo("OK");
                }
            }
            peer.kill();
            // One of two is no majority: the survivor refuses keys rather than risk a split brain...
            try (Jedis j = new Jedis("127.0.0.1", survivor.port(), 10_000)) {
                long deadline = System.nanoTime() + 15_000_000_000L;
                String reply = "";
                while (!reply.startsWith("CLUSTERDOWN") && System.nanoTime() < deadline) {
                    reply = catching(() -> j.get("two0"));
                    Thread.sleep(50);
                }
                assertThat(reply).startsWith("CLUSTERDOWN");
            }
            // ...but keeps its data: the restarted peer (a fresh process) has no newer copy of anything.
            peer.restart();
            cluster.awaitAgreement(2, 60_000);
            for (KvtierProcess node : cluster.nodes) {
                try (Jedis j = new Jedis("127.0.0.1", node.port(), 10_000)) {
                    for (int i = 0; i < n; i++) {
                        assertThat(j.get("two" + i)).as("two" + i + " through " + node.port()).isEqualTo("v" + i);
                    }
                }
            }
            // It stayed an active member throughout (its peer's old incarnation was excluded once the majority was
            // back): it never dropped its keys.
            assertThat(survivor.logText()).doesNotContain("dropping");
        }
    }

    @Test
    void restartedNodeNeverServesAValueOverwrittenWhileItWasAway() throws Exception {
        try (TestCluster cluster = TestCluster.startWith(tmp, 3, 0, DEFAULT_PEER_TIMEOUT)) {
            KvtierProcess away = cluster.nodes.get(1);
            KvtierProcess entry = cluster.nodes.get(0);
            int n = 300;
            try (Jedis j = new Jedis("127.0.0.1", entry.port(), 10_000)) {
                for (int i = 0; i < n; i++) {
                    assertThat(j.set("r" + i, "old-" + i)).isEqualTo("OK");
                }
            }
            away.stop();
            cluster.awaitAgreement(2, 15_000);
            try (Jedis j = new Jedis("127.0.0.1", entry.port(), 10_000)) {
                for (int i = 0; i < n; i++) {
                    if (i % 3 == 0) {
                        assertThat(j.del("r" + i)).isEqualTo(1);
                    } else {
                        assertThat(j.set("r" + i, "new-" + i)).isEqualTo("OK");
                    }
                }
            }
            away.restart();
            cluster.awaitAgreement(3, 60_000);
            try (Jedis j = new Jedis("127.0.0.1", away.port(), 10_000)) {
                for (int i = 0; i < n; i++) {
                    byte[] got = j.get(("r" + i).getBytes(StandardCharsets.UTF_8));
                    if (i % 3 == 0) {
                        assertThat(got).as("r" + i + " was deleted while the node was away").isNull();
                    } else {
                        assertThat(new String(got, StandardCharsets.UTF_8)).isEqualTo("new-" + i);
                    }
                }
            }
            // It kept its copy and compared it with the fresh ones: the deleted keys went, the overwritten were copied.
            assertThat(away.logText()).contains("keeps them").contains("that a fresh copy no longer has");
        }
    }
}
