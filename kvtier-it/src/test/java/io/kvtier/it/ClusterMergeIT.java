package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/**
 * A joiner whose seeds do not answer within the join timeout (2 s) founds a cluster of its own: JGroups makes it a
 * singleton coordinator, and as a cluster's founder it is complete for every slot, and empty. MERGE3 merges it with the
 * running cluster seconds later; it must not keep those slots. ClusterAuthIT once read nil for auth16, the first of its
 * keys whose slot moves to the fourth node.
 */
class ClusterMergeIT {
    /**
     * A failure timeout long enough that the running nodes, stopped while the joiner looks for them, are neither
     * excluded nor think themselves paused (that takes half of it); a peer timeout above the default 1 s, since the
     * writes before the join are not what this test is about and a loaded host can hold a forwarded SET up that long.
     */
    private static final List<String> FLAGS = List.of("--failure-timeout", "30s", "--peer-timeout", "3s");

    @TempDir
    Path tmp;

    @Test
    void aJoinerThatFoundedAClusterOfItsOwnImportsItsSlotsWhenTheClustersMerge() throws Exception {
        try (TestCluster cluster = TestCluster.startWith(tmp, 3, 1, i -> FLAGS)) {
            List<KvtierProcess> running = List.copyOf(cluster.nodes);
            try (Jedis j = running.get(0).jedis(10_000)) {
                for (int i = 0; i < 100; i++) {
                    assertThat(j.set("merge" + i, "v" + i)).isEqualTo("OK");
                }
            }
            KvtierProcess joiner;
            for (KvtierProcess node : running) {
                node.signal("STOP"); // its seeds do not answer in time...
            }
            try {
                joiner = cluster.addWith(FLAGS);
                awaitLog(joiner, "serving epoch 1 over 1 members", 12_000); // ...so it founds a cluster of its own
            } finally {
                for (KvtierProcess node : running) {
                    node.signal("CONT");
                }
            }
            cluster.awaitAgreement(4, 60_000);
            assertThat(joiner.logText()).as("the joiner gave up the slots of its own cluster")
                    .contains("that served without it");
            for (KvtierProcess node : cluster.nodes) {
                try (Jedis j = node.jedis(10_000)) {
                    for (int i = 0; i < 100; i++) {
                        assertThat(j.get("merge" + i)).as("merge" + i + " through " + node.port()).isEqualTo("v" + i);
                    }
                }
            }
        }
    }

    private static void awaitLog(KvtierProcess node, String text, long timeoutMillis) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000;
        while (!node.logText().contains(text)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no '" + text + "' in the log within " + timeoutMillis + " ms:\n"
                        + node.logText());
            }
            Thread.sleep(50);
        }
    }
}
