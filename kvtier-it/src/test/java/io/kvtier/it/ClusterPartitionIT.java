package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/**
 * The partition policy on real node processes, each in a network namespace of its own: three nodes, one cut off by
 * taking its link down (its process keeps running, as behind a failed switch port). The side with a majority of the
 * last view keeps serving reads and writes; the cut-off node refuses keys (-CLUSTERDOWN) to its own clients; once
 * the link is back it rejoins, drops what it held and never serves a value overwritten or deleted meanwhile.
 */
class ClusterPartitionIT {
    @TempDir(cleanup = org.junit.jupiter.api.io.CleanupMode.ON_SUCCESS)
    Path tmp;

    @Test
    void minorityRefusesKeysAndRejoinsWithoutServingStaleValues() throws Exception {
        assumeTrue(NetworkNamespaces.available(), "needs root and iproute2 for network namespaces");
        try (NetworkNamespaces ns = NetworkNamespaces.create(3); TestCluster cluster = TestCluster.startIn(ns, tmp, 3)) {
            KvtierProcess entry = cluster.nodes.get(0);
            KvtierProcess cut = cluster.nodes.get(2);
            List<KvtierProcess> majority = cluster.nodes.subList(0, 2);
            int n = 300;
            try (Jedis j = new Jedis(entry.host(), entry.port(), 10_000)) {
                for (int i = 0; i < n; i++) {
                    assertThat(j.set("p" + i, "old-" + i)).isEqualTo("OK");
                }
            }
            LoadGenerator load = new LoadGenerator(() -> majority, 4, true);
            Thread.sleep(1_000);

            long cutAt = System.nanoTime();
            ns.isolate(2);
            long excluded = cluster.awaitMembers(2, 15_000, majority);
            long refusing = awaitMinorityRefuses(ns, cut, cutAt, 15_000);
            String minorityGet = ns.runIn(2, "redis-cli", "-h", cut.host(), "-p", Integer.toString(cut.port()), "GET",
                    "p1");
            System.out.printf("partition: the majority served 2 members %d ms after the cut; the cut-off node refused"
                    + " keys %d ms after it (failure timeout %s)%n", excluded, refusing, TestCluster.FAILURE_TIMEOUT);
            assertThat(minorityGet).startsWith("CLUSTERDOWN");

            try (Jedis j = new Jedis(entry.host(), entry.port(), 10_000)) {
                for (int i = 0; i < n; i++) {
                    String key = "p" + i;
                    if (i % 3 == 0) {
                        // A retried DEL whose first try ran answers 0: the key must be gone either way.
                        assertThat(idempotent(() -> j.del(key))).as("delete on the majority side").isBetween(0L, 1L);
                        assertThat(j.exists(key)).isFalse();
                    } else {
                        String value = "new-" + i;
                        assertThat(idempotent(() -> j.set(key, value))).as("write on the majority side")
                                .isEqualTo("OK");
                    }
                }
            }

            ns.heal(2);
            long merged = cluster.awaitAgreement(3, 60_000, cluster.nodes);
            load.close();
            System.out.printf("heal: all three agree again %d ms after the link came back (%d ms after the cut); load:"
                    + " %d writes, %d reads, %d errors, longest call %d ms%n", merged,
                    (System.nanoTime() - cutAt) / 1_000_000, load.writes.get(), load.reads.get(), load.errors.get(),
                    load.maxCallMillis.get());
            // Cut off, its renewals stopped committing and its lease ran out; back, it was included again as a fresh
            // member and dropped what it held (ADR 0005).
            assertThat(cut.logText()).contains("lease renewal failed").contains("dropping");
            try (Jedis j = new Jedis(cut.host(), cut.port(), 10_000)) {
                assertThat(j.get("minority-write")).as("a write the cut-off node refused").isNull();
                for (int i = 0; i < n; i++) {
                    String got = j.get("p" + i);
                    assertThat(got).as("p" + i + " through the node that was cut off")
                            .isEqualTo(i % 3 == 0 ? null : "new-" + i);
                }
            }
            assertThat(load.wrong).isEmpty();
            assertThat(load.writes.get()).as("writes on the majority side").isPositive();
            for (KvtierProcess node : cluster.nodes) {
                assertThat(load.verifyAll(node)).as("acknowledged writes read through " + node.host()).isEmpty();
            }
        }
    }

    /**
     * Runs an idempotent write, again (up to 5 times) when the node answers that it may or may not have run: a
     * forwarded call can queue on a peer connection behind a write still waiting for the cut-off node (peer timeout).
     */
    private static <T> T idempotent(java.util.function.Supplier<T> write) {
        for (int attempt = 1; ; attempt++) {
            try {
                return write.get();
            } catch (redis.clients.jedis.exceptions.JedisDataException e) {
                boolean retry = e.getMessage().startsWith("UNREACHABLE") || e.getMessage().startsWith("TRYAGAIN");
                if (!retry || attempt == 5) {
                    throw e;
                }
            }
        }
    }

    /** Polls the cut-off node from inside its namespace until a write is refused with CLUSTERDOWN; ms since the cut. */
    private static long awaitMinorityRefuses(NetworkNamespaces ns, KvtierProcess node, long cutAt, long timeoutMillis)
            throws Exception {
        String last = "";
        while ((System.nanoTime() - cutAt) / 1_000_000 < timeoutMillis) {
            last = ns.runIn(2, "redis-cli", "-h", node.host(), "-p", Integer.toString(node.port()), "SET",
                    "minority-write", "x");
            if (last.startsWith("CLUSTERDOWN")) {
                return (System.nanoTime() - cutAt) / 1_000_000;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("the cut-off node still accepted keys " + timeoutMillis + " ms after the cut: " + last);
    }
}
