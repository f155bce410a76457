package io.kvtier.it.mini;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/** What one failure costs the keys it does not touch, and what a node's return costs (issue 28). */
class MiniClusterFailoverIT {
    @TempDir(cleanup = org.junit.jupiter.api.io.CleanupMode.ON_SUCCESS)
    Path tmp;

    @Test
    void killingANonLeaderPausesNoWriteToKeysWhoseOwnersSurvive() throws Exception {
        try (MiniCluster c = MiniCluster.start(tmp, 3)) {
            MiniCluster.Node victim = c.nodes().stream()
                    .filter(n -> !MiniCluster.status(n).get("kvtier_raft_leader").equals("1")).findFirst().orElseThrow();
            MiniCluster.Node via = c.nodes().stream().filter(n -> n != victim).findFirst().orElseThrow();
            List<String> keys = Probes.keysOwnedOnlyBy(Probes.owners(c, via), victim.id, 8);
            try (Probes.WriteProbe probe = new Probes.WriteProbe(via, keys)) {
                Thread.sleep(1_000);
                probe.reset();
                c.kill(victim);
                Thread.sleep(4_000);
                System.out.printf("kill -9 of %s (not the leader): %d writes to keys it owns none of, longest "
                        + "pause %d ms, %d failed %s%n", victim.id, probe.writes(), probe.longestGapMillis(),
                        probe.failures(), probe.errors());
                assertThat(probe.longestGapMillis()).isLessThan(200);
                assertThat(probe.failures()).isZero();
            }
        }
    }

    @Test
    void cuttingOffTheRaftLeaderPausesTheOtherNodesKeysAtMostALease() throws Exception {
        try (MiniCluster c = MiniCluster.start(tmp, 3)) {
            MiniCluster.Node leader = c.nodes().stream()
                    .filter(n -> MiniCluster.status(n).get("kvtier_raft_leader").equals("1")).findFirst().orElseThrow();
            MiniCluster.Node via = c.nodes().stream().filter(n -> n != leader).findFirst().orElseThrow();
            List<String> keys = Probes.keysOwnedOnlyBy(Probes.owners(c, via), leader.id, 8);
            try (Probes.WriteProbe probe = new Probes.WriteProbe(via, keys)) {
                Thread.sleep(1_000);
                probe.reset();
                c.isolate(leader);
                Thread.sleep(6_000);
                System.out.printf("the Raft leader %s cut off: %d writes to keys it owns none of, longest pause %d ms "
                        + "(lease 1000 ms, failure timeout %s), %d failed %s%n", leader.id, probe.writes(),
                        probe.longestGapMillis(), "2s", probe.failures(), probe.errors());
                assertThat(probe.longestGapMillis()).isLessThanOrEqualTo(1_000);
            }
            c.heal();
        }
    }

    @Test
    void aRollingRestartCopiesOnlyWhatChangedWhileANodeWasAway() throws Exception {
        try (MiniCluster c = MiniCluster.start(tmp, 3)) {
            Map<String, String> written = MiniClusterRestartIT.write(c, 3_000);
            String payload = "v".repeat(1_000);
            int round = 0;
            for (MiniCluster.Node n : c.nodes()) {
                long keysBefore = Probes.stat(n, "kvtier_imported_keys_total");
                long bytesBefore = Probes.stat(n, "kvtier_imported_bytes_total");
                c.stop(n);
                // While it is away, 100 of the 3,000 keys change (a third of them on slots it owns, as a backup or a
                // primary): it must copy those back, and nothing else.
                MiniCluster.Node other = c.running().getFirst();
                try (Jedis j = other.jedis()) {
                    for (int i = 0; i < 100; i++) {
                        String k = "key-" + (round * 100 + i);
                        String v = "changed-" + round + "-" + payload;
                        assertThat(setRetryingTryAgain(j, k, v)).isEqualTo("OK");
                        written.put(k, v);
                    }
                }
                c.restart(n);
                c.awaitAgreement(3, 30_000);
                long copied = Probes.stat(n, "kvtier_imported_keys_total") - keysBefore;
                long bytes = Probes.stat(n, "kvtier_imported_bytes_total") - bytesBefore;
                var stats = n.server().context().store().stats();
                System.out.printf("rolling restart of %s: 100 keys changed while it was away; it copied %d keys (%d "
                        + "bytes) back, holding %d keys (%d value bytes in memory and on disk)%n", n.id, copied,
                        bytes, stats.keys(), stats.memoryValueBytes() + stats.diskValueBytes());
                assertThat(copied).as("keys copied to %s on its return", n.id).isBetween(1L, 100L);
                round++;
            }
            MiniClusterRestartIT.assertAllReadable(c, written);
        }
    }

    /**
     * SET, resent on -TRYAGAIN (the command did not run: a slot handed over as the table changes), as a cluster-aware
     * client does; at most for 5 s.
     */
    static String setRetryingTryAgain(Jedis j, String key, String value) throws InterruptedException {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (true) {
            try {
                return j.set(key, value);
            } catch (redis.clients.jedis.exceptions.JedisDataException e) {
                if (e.getMessage() == null || !e.getMessage().startsWith("TRYAGAIN") || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(10);
            }
        }
    }
}
