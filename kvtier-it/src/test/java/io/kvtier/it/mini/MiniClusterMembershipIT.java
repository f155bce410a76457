package io.kvtier.it.mini;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.client.cluster.SlotHash;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/** Scale-in, and what it leaves of the quorum (issue 28). */
class MiniClusterMembershipIT {
    @TempDir(cleanup = org.junit.jupiter.api.io.CleanupMode.ON_SUCCESS)
    Path tmp;

    @Test
    void fiveDrainedToThreeThenOneKilledLeaveTwoServingEveryKey() throws Exception {
        try (MiniCluster c = MiniCluster.start(tmp, 5)) {
            Map<String, String> written = MiniClusterRestartIT.write(c, 2_000);
            for (MiniCluster.Node leaving : List.of(c.node(4), c.node(3))) {
                try (Jedis j = leaving.jedis()) {
                    assertThat(j.sendCommand(() -> "KVT.LEAVE".getBytes())).isEqualTo("OK".getBytes());
                }
                c.awaitAgreement(c.running().size() - 1, 60_000, c.running().stream().filter(n -> n != leaving)
                        .toList());
                c.stop(leaving);
            }
            Map<String, String> status = awaitVoters(c.node(0), "n1,n2,n3", 15_000);
            assertThat(status.get("kvtier_raft_voter_ids")).isEqualTo("n1,n2,n3");
            assertThat(status.get("cluster_known_nodes")).isEqualTo("3");
            long killed = System.nanoTime();
            c.kill(c.node(2));
            List<String> probes = java.util.stream.IntStream.range(0, 300).mapToObj(i -> "after-" + i).toList();
            long servedAfter = awaitWrites(c.node(0), probes, 15_000) + (System.nanoTime() - killed) / 1_000_000;
            System.out.printf("5 nodes drained to 3, then kill -9 of one: the two served writes to every key %d ms "
                    + "after the kill%n", servedAfter);
            assertThat(servedAfter).isLessThan(15_000);
            MiniClusterRestartIT.assertAllReadable(c, written);
        }
    }

    @Test
    void fiveStoppedToThreeKeepAQuorumThatSurvivesTheNextFailure() throws Exception {
        try (MiniCluster c = MiniCluster.start(tmp, 5)) {
            MiniClusterRestartIT.write(c, 500);
            c.stop(c.node(4));
            c.stop(c.node(3));
            Map<String, String> status = awaitVoters(c.node(0), "n1,n2,n3", 15_000);
            assertThat(status.get("kvtier_raft_voter_ids")).as("the stopped ones left the majority")
                    .isEqualTo("n1,n2,n3");
            // Right as the voters change, a voter may not have been heard from under the new set yet (reported as
            // unreachable for a moment): the figure settles at one failure tolerated.
            long settle = System.nanoTime() + 5_000_000_000L;
            while (!"1".equals(status.get("kvtier_voter_failures_tolerated")) && System.nanoTime() < settle) {
                Thread.sleep(50);
                status = MiniCluster.status(c.node(0));
            }
            assertThat(status.get("kvtier_voter_failures_tolerated")).isEqualTo("1");
            List<String>[] owners = Probes.owners(c, c.node(0));
            long killed = System.nanoTime();
            c.kill(c.node(2));
            // The two keep the quorum: keys whose owners are among them take writes within seconds.
            List<String> theirs = new java.util.ArrayList<>();
            for (int i = 0; theirs.size() < 100; i++) {
                String k = "w" + i;
                List<String> o = owners[SlotHash.slot(k.getBytes())];
                if (o != null && !o.isEmpty() && o.stream().allMatch(id -> id.equals("n1") || id.equals("n2"))) {
                    theirs.add(k);
                }
            }
            awaitWrites(c.node(0), theirs, 15_000);
            long servedAfter = (System.nanoTime() - killed) / 1_000_000;
            System.out.printf("5 nodes stopped to 3, then kill -9 of one: the two served writes %d ms after it%n",
                    servedAfter);
            assertThat(servedAfter).isLessThan(15_000);
        }
    }

    /** Waits until {@code node} reports the voters {@code ids}; returns its status then (or at the limit). */
    private static Map<String, String> awaitVoters(MiniCluster.Node node, String ids, long limitMillis)
            throws InterruptedException {
        long deadline = System.nanoTime() + limitMillis * 1_000_000;
        Map<String, String> status = MiniCluster.status(node);
        while (!ids.equals(status.get("kvtier_raft_voter_ids")) && System.nanoTime() < deadline) {
            Thread.sleep(50);
            status = MiniCluster.status(node);
        }
        return status;
    }

    /** Writes every key through {@code via} until all succeed in one pass; returns the ms that took. */
    private static long awaitWrites(MiniCluster.Node via, List<String> keys, long limitMillis) throws Exception {
        long start = System.nanoTime();
        while ((System.nanoTime() - start) / 1_000_000 < limitMillis + 5_000) {
            boolean all = true;
            try (Jedis j = via.jedis()) {
                for (String k : keys) {
                    try {
                        j.set(k, "after");
                    } catch (RuntimeException e) {
                        all = false;
                        break;
                    }
                }
            }
            if (all) {
                return (System.nanoTime() - start) / 1_000_000;
            }
            Thread.sleep(100);
        }
        return Long.MAX_VALUE;
    }
}
