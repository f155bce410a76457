package io.kvtier.bench.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.bench.BenchOptions;
import io.kvtier.bench.BenchRun;
import io.kvtier.bench.load.Limit;
import io.kvtier.bench.report.BenchResult;
import io.kvtier.bench.report.ProgressListener;
import io.kvtier.bench.workload.SetGetSpec;
import io.kvtier.client.Reply;
import io.kvtier.cluster.HostPort;
import io.kvtier.cluster.SlotHash;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
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
 * test kills a node.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterRouterAgainstRedisClusterTest {
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

    private static RouterOptions options(Duration timeout) {
        return new RouterOptions(new HostPort("127.0.0.1", redis.ports.getFirst()), null, 6, timeout,
                RouterOptions.Mode.SLOTS);
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
    void connectionsAreSpreadOverThePrimaries() throws Exception {
        try (ClusterRouter router = ClusterRouter.open(options(Duration.ofSeconds(5)), CommandObserver.NONE)) {
            assertThat(redis.ports.stream().mapToInt(p -> router.poolSize(new HostPort("127.0.0.1", p))))
                    .containsExactlyInAnyOrder(2, 2, 2);
        }
    }

    @Test
    @Order(3)
    void aMovedSlotIsFollowedAndRemembered() throws Exception {
        byte[] key = "kvtier-bench:moved-test".getBytes(StandardCharsets.UTF_8);
        int slot = SlotHash.slot(key);
        try (ClusterRouter router = ClusterRouter.open(options(Duration.ofSeconds(5)), CommandObserver.NONE)) {
            HostPort owner = router.slotMap().primary(slot);
            int target = redis.ports.stream().filter(p -> p != owner.port()).findFirst().orElseThrow();
            String targetId = RedisCluster.cli(target, "CLUSTER", "MYID");
            for (int port : redis.ports) { // the slot is empty, so every node accepts the new owner
                assertThat(RedisCluster.cli(port, "CLUSTER", "SETSLOT", Integer.toString(slot), "NODE", targetId))
                        .isEqualTo("OK");
            }

            Reply reply = router.send(0, key, "SET", key, "v").get(5, TimeUnit.SECONDS);

            assertThat(reply).isEqualTo(new Reply.Simple("OK"));
            assertThat(router.slotMap().primary(slot)).isEqualTo(new HostPort("127.0.0.1", target));
            assertThat(router.notes().getFirst()).contains("1 MOVED followed");
        }
    }

    @Test
    @Order(4)
    void anUnreachableEntryNodeIsRefusedNamingTheFlags() throws Exception {
        int closed = RedisCluster.freePort();
        RouterOptions nowhere = new RouterOptions(new HostPort("127.0.0.1", closed), null, 2, Duration.ofSeconds(1),
                RouterOptions.Mode.SLOTS);

        assertThatThrownBy(() -> ClusterRouter.open(nowhere, CommandObserver.NONE)).isInstanceOf(IOException.class)
                .hasMessageContaining("--cluster: cannot reach 127.0.0.1:" + closed)
                .hasMessageContaining("a cluster node? (--host, --port");
    }

    @Test
    @Order(99)
    void aKilledNodeCostsErrorsForItsKeysButNoHangAndTheOthersKeepServing() throws Exception {
        HostPort dead = new HostPort("127.0.0.1", redis.ports.get(2));
        try (ClusterRouter router = ClusterRouter.open(options(Duration.ofSeconds(1)), CommandObserver.NONE)) {
            redis.kill(2);
            byte[] deadKey = keyOn(router, dead, true);
            byte[] liveKey = keyOn(router, dead, false);
            long start = System.nanoTime();

            Reply live = router.send(1, liveKey, "SET", liveKey, "v").get(5, TimeUnit.SECONDS);
            var failed = router.send(1, deadKey, "SET", deadKey, "v");

            assertThat(live).isEqualTo(new Reply.Simple("OK"));
            assertThat(failed).failsWithin(Duration.ofSeconds(3));
            assertThat(System.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(3));
            assertThat(RoutedCommand.errorKind(null, failed.exceptionNow())).isIn("unreachable", "timeout");
        }
    }

    @Test
    @Order(100)
    void aCommandForADeadNodeAsksAnotherNodeWhichPointsToTheSlotsNewPrimary() throws Exception {
        HostPort dead = new HostPort("127.0.0.1", redis.ports.get(2));
        int newOwner = redis.ports.get(1);
        try (ClusterRouter router = ClusterRouter.open(options(Duration.ofSeconds(5)), CommandObserver.NONE)) {
            byte[] key = keyOn(router, dead, true);
            String id = RedisCluster.cli(newOwner, "CLUSTER", "MYID");
            for (int port : redis.ports.subList(0, 2)) { // a failover, as far as the live nodes know
                assertThat(RedisCluster.cli(port, "CLUSTER", "SETSLOT", Integer.toString(SlotHash.slot(key)), "NODE",
                        id)).isEqualTo("OK");
            }

            Reply reply = router.send(0, key, "SET", key, "v").get(5, TimeUnit.SECONDS);

            assertThat(reply).isEqualTo(new Reply.Simple("OK"));
            assertThat(router.notes().getFirst()).as("the entry node answered MOVED").contains("1 MOVED followed");
        }
    }

    @Test
    @Order(101)
    void aWorkloadAgainstAClusterWithADeadNodeRunsToItsEndCountingErrors() throws Exception {
        // The dead node is still in CLUSTER SLOTS (Redis marks it failed only after its node timeout): the run
        // starts on the two live primaries, and the commands for the third fail, each within the timeout.
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

    private static byte[] keyOn(ClusterRouter router, HostPort node, boolean on) {
        for (int i = 0; ; i++) {
            byte[] key = ("kvtier-bench:k" + i).getBytes(StandardCharsets.UTF_8);
            if (node.equals(router.slotMap().primaryOf(key)) == on) {
                return key;
            }
        }
    }
}
