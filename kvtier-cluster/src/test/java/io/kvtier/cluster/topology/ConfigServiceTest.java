package io.kvtier.cluster.topology;

import static io.kvtier.cluster.ClusterTesting.awaitUntil;
import static io.kvtier.cluster.ClusterTesting.freePorts;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.cluster.membership.ClusterOptions;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real Raft groups on loopback, one JGroups stack per node in this JVM: voters agree on one table, leases hold, a node
 * that stops renewing is excluded only after its lease, a restarted incarnation is included again, and a node
 * started alone with seeds never founds a cluster of its own.
 */
class ConfigServiceTest {
    private static final Duration LEASE = Duration.ofMillis(600);
    private static final List<String> VOTERS = List.of("n1", "n2", "n3");
    private final List<ConfigService> services = new ArrayList<>();
    private final Map<String, ClusterConfig> seen = new ConcurrentHashMap<>();
    @TempDir
    Path dir;

    @AfterEach
    void close() {
        services.forEach(ConfigService::close);
    }

    private ClusterOptions options(String id, int port, int[] ports, List<String> voters) {
        List<String> seeds = IntStream.of(ports).mapToObj(p -> "127.0.0.1:" + p).toList();
        return ClusterOptions.of(id, 1, port, seeds).withFailureTimeout(Duration.ofSeconds(1))
                .withEndpoint("127.0.0.1:" + (port + 1)).withVoters(voters).withLease(LEASE)
                .withStateDir(dir.resolve(id));
    }

    private ConfigService start(String id, int port, int[] ports, List<String> voters, long incarnation)
            throws Exception {
        ConfigService s = ConfigService.start(options(id, port, ports, voters), incarnation, 1, java.util.BitSet::new,
                c -> seen.put(id + "/" + incarnation, c));
        services.add(s);
        return s;
    }

    /** Three voters n1..n3 on {@code ports}, incarnations from {@code incarnation}, once all three hold leases. */
    private List<ConfigService> startThree(int[] ports, long incarnation) throws Exception {
        List<ConfigService> nodes = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            nodes.add(start("n" + (i + 1), ports[i], ports, VOTERS, incarnation + i));
        }
        awaitUntil(Duration.ofSeconds(20), "three active members everywhere", () -> nodes.stream()
                .allMatch(n -> n.current().members().size() == 3 && n.leaseValid()));
        return nodes;
    }

    @Test
    void votersAgreeOnOneTableAndHoldLeases() throws Exception {
        List<ConfigService> nodes = startThree(freePorts(3), 100);
        long epoch = nodes.get(0).current().epoch();
        assertThat(nodes).allSatisfy(n -> {
            assertThat(n.current().epoch()).isEqualTo(epoch);
            assertThat(n.current().table()).isEqualTo(nodes.get(0).current().table());
        });
        assertThat(nodes.stream().filter(ConfigService::isLeader).count()).isEqualTo(1);
    }

    @Test
    void aSilentMemberIsExcludedOnlyAfterItsLeaseAndItsNextIncarnationIsIncluded() throws Exception {
        int[] ports = freePorts(3);
        List<ConfigService> nodes = startThree(ports, 200);
        ConfigService victim = nodes.stream().filter(n -> !n.isLeader()).findFirst().orElseThrow();
        String id = victim.current().members().keySet().stream()
                .filter(k -> victim.current().isActive(k, victim.incarnation())).findFirst().orElseThrow();
        long stopped = System.nanoTime();
        victim.close();
        ConfigService survivor = nodes.stream().filter(n -> n != victim).findFirst().orElseThrow();
        awaitUntil(Duration.ofSeconds(10), id + " excluded", () -> !survivor.current().members().containsKey(id));
        long excludedAfterMs = (System.nanoTime() - stopped) / 1_000_000;
        // Its last renewal was at most a quarter lease before the stop; the leader waits a whole lease after applying it.
        assertThat(excludedAfterMs).isGreaterThanOrEqualTo((long) (LEASE.toMillis() * 0.75));
        int port = ports[Integer.parseInt(id.substring(1)) - 1];
        ConfigService again = start(id, port, ports, VOTERS, 999);
        awaitUntil(Duration.ofSeconds(20), id + " included again", () -> survivor.current().isActive(id, 999)
                && again.leaseValid());
    }

    @Test
    void aNodeWithSeedsAndNoVotersNeverFoundsAClusterAlone() throws Exception {
        int[] ports = freePorts(2);
        ConfigService lone = start("n1", ports[0], ports, List.of(), 1);
        Thread.sleep(4_000); // the join timeout (2 s), then a few leases
        assertThat(lone.current().members()).isEmpty();
        assertThat(lone.leaseValid()).isFalse();
        assertThat(lone.isLeader()).isFalse();
    }
}
