package io.kvtier.it.mini;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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
            for (MiniCluster.Node n : c.nodes()) {
                long keysBefore = Long.parseLong(MiniCluster.status(n).get("kvtier_imported_keys_total"));
                c.stop(n);
                c.restart(n);
                c.awaitAgreement(3, 30_000);
                long copied = Probes.stat(n, "kvtier_imported_keys_total");
                long bytes = Probes.stat(n, "kvtier_imported_bytes_total");
                long size = n.server().context().store().size();
                System.out.printf("rolling restart of %s: copied %d keys (%d bytes) back, holding %d keys%n", n.id,
                        copied, bytes, size);
                assertThat(copied).as("keys copied to %s on its return", n.id).isZero();
            }
            MiniClusterRestartIT.assertAllReadable(c, written);
        }
    }
}
