package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/**
 * A joiner whose seeds do not answer within the join timeout (2 s) is made a singleton by JGroups. Before ADR 0005 it
 * then founded a cluster of its own, complete for every slot and empty, and MERGE3 merged it with the running cluster
 * seconds later (ClusterAuthIT once read nil for auth16, the first of its keys whose slot moved to the fourth node).
 * Now it is a learner with no voters: it serves nothing and founds nothing, and it joins once its seeds answer.
 */
class ClusterMergeIT {
    /**
     * A failure timeout long enough that the running nodes, stopped while the joiner looks for them, are neither
     * excluded nor think themselves paused (that takes half of it); a peer timeout above the default 1 s, since the
     * writes before the join are not what this test is about and a loaded host can hold a forwarded SET up that long.
     */
    private static final List<String> FLAGS = List.of("--failure-timeout", "30s", "--peer-timeout", "3s");

    @TempDir(cleanup = org.junit.jupiter.api.io.CleanupMode.ON_SUCCESS)
    Path tmp;

    @Test
    void aJoinerWhoseSeedsDoNotAnswerFoundsNoClusterAndJoinsOnceTheyDo() throws Exception {
        try (TestCluster cluster = TestCluster.startWith(tmp, 3, 1, i -> FLAGS)) {
            List<KvtierProcess> running = List.copyOf(cluster.nodes);
            try (Jedis j = running.get(0).jedis(10_000)) {
                for (int i = 0; i < 100; i++) {
                    assertThat(j.set("merge" + i, "v" + i)).isEqualTo("OK");
                }
            }
            CompletableFuture<KvtierProcess> joining;
            for (KvtierProcess node : running) {
                node.signal("STOP"); // its seeds do not answer in time...
            }
            try {
                // Answers PING only once it has joined: started on a thread of its own while its seeds stand still.
                joining = CompletableFuture.supplyAsync(() -> cluster.addWith(FLAGS),
                        r -> Thread.ofPlatform().daemon().start(r));
                Thread.sleep(6_000); // well past the join timeout, when it used to found a cluster of its own
            } finally {
                for (KvtierProcess node : running) {
                    node.signal("CONT");
                }
            }
            KvtierProcess joiner = joining.get(90, TimeUnit.SECONDS);
            cluster.awaitAgreement(4, 60_000);
            assertThat(joiner.logText()).as("the joiner never served a table of its own")
                    .doesNotContain("over 1 members").contains("over 4 members");
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
