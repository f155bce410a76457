package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/**
 * A joiner whose seeds did not answer within the join timeout founds a cluster of its own (JGroups makes it a
 * singleton coordinator) and merges with the running cluster seconds later. It must not keep the slots it was
 * "complete" for in its own empty cluster: ClusterAuthIT once read nil for the first key whose slot moved to such a
 * joiner.
 */
class ClusterMergeIT {
    /**
     * A peer timeout above the default 1 s: the writes before the merge are not what this test is about, and a loaded
     * host can hold a forwarded SET up that long (UNREACHABLE).
     */
    private static final List<String> FLAGS = List.of("--peer-timeout", "3s");

    @TempDir
    Path tmp;

    @Test
    void aJoinerThatFoundedAClusterOfItsOwnImportsItsSlotsWhenTheClustersMerge() throws Exception {
        try (TestCluster cluster = TestCluster.startWith(tmp, 3, 1, i -> FLAGS)) {
            try (Jedis j = cluster.nodes.get(0).jedis(10_000)) {
                for (int i = 0; i < 100; i++) {
                    assertThat(j.set("merge" + i, "v" + i)).isEqualTo("OK");
                }
            }
            KvtierProcess alone = cluster.addAlone(FLAGS);
            cluster.awaitAgreement(4, 60_000);
            assertThat(alone.logText()).as("the joiner founded a cluster of its own first")
                    .contains("serving epoch 1 over 1 members");
            assertThat(alone.logText()).as("and gave up its slots on merging").contains("that served without it");
            for (KvtierProcess node : cluster.nodes) {
                try (Jedis j = node.jedis(10_000)) {
                    for (int i = 0; i < 100; i++) {
                        assertThat(j.get("merge" + i)).as("merge" + i + " through " + node.port()).isEqualTo("v" + i);
                    }
                }
            }
        }
    }
}
