package io.kvtier.client.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.client.HostPort;
import io.kvtier.client.Reply;
import io.kvtier.client.cluster.SlotHash;
import io.kvtier.testkit.RedisCluster;
import io.kvtier.testkit.RedisServerProcess;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cluster client against a real Redis Cluster (three redis-server processes from PATH, no replicas): Redis answers
 * every misrouted command with -MOVED, so a reply without one proves the routing. The last tests kill a node.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterClientAgainstRedisClusterTest {
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

    private static ClusterClientOptions options(Duration timeout) {
        return new ClusterClientOptions(new HostPort("127.0.0.1", redis.ports.getFirst()), null, 6, timeout,
                ClusterClientOptions.Mode.SLOTS);
    }

    @Test
    @Order(2)
    void connectionsAreSpreadOverThePrimaries() throws Exception {
        try (ClusterClient client = ClusterClient.open(options(Duration.ofSeconds(5)), CommandObserver.NONE)) {
            assertThat(redis.ports.stream().mapToInt(p -> client.poolSize(new HostPort("127.0.0.1", p))))
                    .containsExactlyInAnyOrder(2, 2, 2);
        }
    }

    @Test
    @Order(3)
    void aMovedSlotIsFollowedAndRemembered() throws Exception {
        byte[] key = "kvtier-bench:moved-test".getBytes(StandardCharsets.UTF_8);
        int slot = SlotHash.slot(key);
        try (ClusterClient client = ClusterClient.open(options(Duration.ofSeconds(5)), CommandObserver.NONE)) {
            HostPort owner = client.slotMap().primary(slot);
            int target = redis.ports.stream().filter(p -> p != owner.port()).findFirst().orElseThrow();
            String targetId = RedisCluster.cli(target, "CLUSTER", "MYID");
            for (int port : redis.ports) { // the slot is empty, so every node accepts the new owner
                assertThat(RedisCluster.cli(port, "CLUSTER", "SETSLOT", Integer.toString(slot), "NODE", targetId))
                        .isEqualTo("OK");
            }

            Reply reply = client.send(0, key, "SET", key, "v").get(5, TimeUnit.SECONDS);

            assertThat(reply).isEqualTo(new Reply.Simple("OK"));
            assertThat(client.slotMap().primary(slot)).isEqualTo(new HostPort("127.0.0.1", target));
            assertThat(client.notes().getFirst()).contains("1 MOVED followed");
        }
    }

    @Test
    @Order(4)
    void anUnreachableEntryNodeIsRefusedNamingIt() throws Exception {
        int closed = RedisServerProcess.freePort();
        ClusterClientOptions nowhere = new ClusterClientOptions(new HostPort("127.0.0.1", closed), null, 2, Duration.ofSeconds(1),
                ClusterClientOptions.Mode.SLOTS);

        assertThatThrownBy(() -> ClusterClient.open(nowhere, CommandObserver.NONE)).isInstanceOf(IOException.class)
                .hasMessageStartingWith("cannot reach 127.0.0.1:" + closed)
                .hasMessageEndingWith("; is 127.0.0.1:" + closed + " a cluster node?");
    }

    @Test
    @Order(99)
    void aKilledNodeCostsErrorsForItsKeysButNoHangAndTheOthersKeepServing() throws Exception {
        HostPort dead = new HostPort("127.0.0.1", redis.ports.get(2));
        try (ClusterClient client = ClusterClient.open(options(Duration.ofSeconds(1)), CommandObserver.NONE)) {
            redis.kill(2);
            byte[] deadKey = keyOn(client, dead, true);
            byte[] liveKey = keyOn(client, dead, false);
            long start = System.nanoTime();

            Reply live = client.send(1, liveKey, "SET", liveKey, "v").get(5, TimeUnit.SECONDS);
            var failed = client.send(1, deadKey, "SET", deadKey, "v");

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
        try (ClusterClient client = ClusterClient.open(options(Duration.ofSeconds(5)), CommandObserver.NONE)) {
            byte[] key = keyOn(client, dead, true);
            String id = RedisCluster.cli(newOwner, "CLUSTER", "MYID");
            for (int port : redis.ports.subList(0, 2)) { // a failover, as far as the live nodes know
                assertThat(RedisCluster.cli(port, "CLUSTER", "SETSLOT", Integer.toString(SlotHash.slot(key)), "NODE",
                        id)).isEqualTo("OK");
            }

            Reply reply = client.send(0, key, "SET", key, "v").get(5, TimeUnit.SECONDS);

            assertThat(reply).isEqualTo(new Reply.Simple("OK"));
            assertThat(client.notes().getFirst()).as("the entry node answered MOVED").contains("1 MOVED followed");
        }
    }

    private static byte[] keyOn(ClusterClient client, HostPort node, boolean on) {
        for (int i = 0; ; i++) {
            byte[] key = ("kvtier-bench:k" + i).getBytes(StandardCharsets.UTF_8);
            if (node.equals(client.slotMap().primaryOf(key)) == on) {
                return key;
            }
        }
    }
}
