package io.kvtier.bench.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.bench.load.Limit;
import io.kvtier.bench.report.BenchResult;
import io.kvtier.bench.report.ProgressListener;
import io.kvtier.bench.workload.SetGetSpec;
import io.kvtier.testkit.RedisCluster;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --cluster} against a real Redis Cluster (three redis-server processes from PATH, no replicas): Redis answers
 * every misrouted command with -MOVED and refuses multi-slot commands, so a clean run proves the routing. The last
 * test kills a node. The cluster client itself is tested in kvtier-client (ClusterClientAgainstRedisClusterTest).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterBenchAgainstRedisClusterTest {
    @TempDir
    static Path dir;

    private static RedisCluster redis;

    @BeforeAll
    static void startCluster() throws Exception {
        redis = RedisCluster.start(dir, 3);
    }

    @AfterAll
    static void stopCluster() throws Exception {
        if (redis != null) {
            redis.close();
        }
    }

    @Test
    @Order(1)
    void setgetWithClusterSendsEveryKeyToItsPrimaryAndDeletesItsWarmUpKeysSlotBySlot() throws Exception {
        BenchOptions o = BenchOptions.builder(new SetGetSpec()).port(redis.ports.getFirst()).cluster(true)
                .connections(6).valueSizes(List.of(1024)).keySpace(300).limit(new Limit.Requests(600))
                .warmUp(new Limit.Requests(64)).verify(true).outputDir(dir.resolve("out")).build();
        ByteArrayOutputStream table = new ByteArrayOutputStream();

        BenchResult result = BenchRun.execute(o, new PrintStream(table, true, StandardCharsets.UTF_8),
                ProgressListener.NONE);

        String printed = table.toString(StandardCharsets.UTF_8);
        assertThat(result.failed()).as(printed).isFalse();
        assertThat(result.run().parameters()).containsEntry("cluster", "true");
        assertThat(printed).contains("3 primaries at the end", "0 MOVED followed");
        long keys = 0;
        for (int port : redis.ports) {
            long n = Long.parseLong(RedisCluster.cli(port, "DBSIZE"));
            assertThat(n).as("keys on " + port).isPositive();
            keys += n;
        }
        assertThat(keys).as("the 300 setget keys, warm-up keys deleted").isEqualTo(300);
    }

    @Test
    @Order(2)
    void aWorkloadAgainstAClusterWithADeadNodeRunsToItsEndCountingErrors() throws Exception {
        // The dead node is still in CLUSTER SLOTS (Redis marks it failed only after its node timeout): the run
        // starts on the two live primaries, and the commands for the third fail, each within the timeout.
        redis.kill(2);
        BenchOptions o = BenchOptions.builder(new SetGetSpec()).port(redis.ports.getFirst()).cluster(true)
                .connections(4).valueSizes(List.of(512)).keySpace(60).limit(new Limit.Requests(120))
                .warmUp(Limit.none()).timeout(Duration.ofSeconds(1)).outputDir(dir.resolve("out")).build();
        long start = System.nanoTime();

        BenchResult result = BenchRun.measure(o, ProgressListener.NONE);

        assertThat(System.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(30));
        assertThat(result.results()).allSatisfy(r -> {
            assertThat(r.count()).isEqualTo(120);
            assertThat(r.errors()).isBetween(1L, 119L);
        });
    }
}
