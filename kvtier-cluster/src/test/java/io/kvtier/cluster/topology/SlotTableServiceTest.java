package io.kvtier.cluster.topology;

import static io.kvtier.cluster.ClusterTesting.awaitUntil;
import static io.kvtier.cluster.ClusterTesting.elapsedMillis;
import static io.kvtier.cluster.ClusterTesting.freePorts;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.cluster.Member;
import io.kvtier.cluster.Placement;
import io.kvtier.cluster.SlotTable;
import io.kvtier.cluster.membership.ClusterOptions;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Real JGroups channels, up to four nodes in this JVM on 127.0.0.1, node-a started first and so the coordinator.
 * Timeouts are generous for a loaded 2-core machine.
 */
class SlotTableServiceTest {
    private static final Duration CONVERGE_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration FAILURE_TIMEOUT = Duration.ofSeconds(2);
    private static final int REPLICAS = 1;
    private static final List<Member> NODES = List.of(new Member("node-a", 1_000), new Member("node-b", 2_000),
            new Member("node-c", 3_000), new Member("node-d", 1_500));

    private final String clusterName = "kvtier-test-" + UUID.randomUUID();
    private final List<SlotTableService> started = new ArrayList<>();
    private final List<List<SlotTable>> installs = new ArrayList<>();
    private List<String> seeds;
    private int[] ports;

    @AfterEach
    void closeAll() {
        started.forEach(SlotTableService::close);
    }

    @Test
    void threeNodesInstallTheSameEpochAndTheTablePlacementComputesOverThem() throws IOException {
        startNodes(3);

        List<SlotTable> tables = awaitConvergence(started, NODES.subList(0, 3));

        assertThat(tables.getFirst().epoch()).isPositive();
        assertThat(tables.getFirst())
                .isEqualTo(Placement.compute(tables.getFirst().epoch(), NODES.subList(0, 3), REPLICAS));
        for (int i = 0; i < 3; i++) {
            assertThat(installs.get(i).getLast()).isEqualTo(tables.getFirst());
            assertThat(installs.get(i)).extracting(SlotTable::epoch).isSorted().doesNotHaveDuplicates();
        }
    }

    @Test
    void aJoinerAndEveryOtherNodeInstallAHigherEpochOverFourMembers() throws IOException {
        startNodes(3);
        long before = awaitConvergence(started, NODES.subList(0, 3)).getFirst().epoch();

        long start = System.nanoTime();
        startNode(3);
        SlotTable four = awaitConvergence(started, NODES).getFirst();
        System.out.printf("four nodes on epoch %d (was %d) %d ms after node-d started%n", four.epoch(), before,
                elapsedMillis(start));

        assertThat(four.epoch()).isGreaterThan(before);
        SlotTable expected = Placement.compute(four.epoch(), NODES, REPLICAS);
        for (int slot = 0; slot < 16_384; slot++) {
            assertThat(four.owners(slot)).isEqualTo(expected.owners(slot));
        }
    }

    @Test
    void survivorsOfAClosedCoordinatorInstallAHigherEpochOverThemselves() throws IOException {
        startNodes(3);
        long before = awaitConvergence(started, NODES.subList(0, 3)).getFirst().epoch();
        assertThat(started.getFirst().membership().isCoordinator()).isTrue();

        long start = System.nanoTime();
        started.getFirst().close();
        List<SlotTableService> survivors = started.subList(1, 3);
        SlotTable two = awaitConvergence(survivors, NODES.subList(1, 3)).getFirst();
        System.out.printf("survivors on epoch %d (was %d) %d ms after the coordinator closed%n", two.epoch(), before,
                elapsedMillis(start));

        assertThat(two.epoch()).isGreaterThan(before);
        assertThat(two).isEqualTo(Placement.compute(two.epoch(), NODES.subList(1, 3), REPLICAS));
        assertThat(survivors.getFirst().membership().isCoordinator()).isTrue();
    }

    @Test
    void anOlderAnnouncementIsIgnoredAndCounted() throws IOException {
        startNodes(3);
        SlotTable table = awaitConvergence(started, NODES.subList(0, 3)).getFirst();
        long staleBefore = started.get(1).staleCount();

        // node-c replays an older epoch over itself alone, as a delayed message from a dead coordinator would arrive.
        List<Member> alone = List.of(NODES.get(2));
        started.get(2).membership().broadcast(new TableAnnouncement(table.epoch() - 1, alone, 0).encode());
        awaitUntil(CONVERGE_TIMEOUT, "node-b counts the stale announcement",
                () -> started.get(1).staleCount() == staleBefore + 1);

        for (SlotTableService node : started) {
            assertThat(node.current()).isEqualTo(table);
        }
    }

    /** As when two nodes started alone, each published its own table, and they merged (seen in a cluster IT). */
    @Test
    void anotherTableOfTheInstalledEpochMakesTheCoordinatorPublishAboveIt() throws IOException {
        startNodes(3);
        SlotTable table = awaitConvergence(started, NODES.subList(0, 3)).getFirst();

        List<Member> alone = List.of(NODES.get(2));
        started.get(2).membership().broadcast(new TableAnnouncement(table.epoch(), alone, 0).encode());
        awaitUntil(CONVERGE_TIMEOUT, "every node above the conflicting epoch",
                () -> started.stream().allMatch(n -> n.epoch() > table.epoch()));

        SlotTable after = awaitConvergence(started, NODES.subList(0, 3)).getFirst();
        assertThat(after).isEqualTo(Placement.compute(after.epoch(), NODES.subList(0, 3), REPLICAS));
    }

    /** As after a merge, when the new coordinator's side never saw the other side's newer epochs. */
    @Test
    void coordinatorHintedAboveItsEpochRepublishesAboveTheHint() throws IOException {
        startNodes(3);
        long before = awaitConvergence(started, NODES.subList(0, 3)).getFirst().epoch();
        long hinted = before + 100;

        started.get(2).membership().broadcast(ByteBuffer.allocate(1 + Long.BYTES)
                .put(SlotTableService.EPOCH_HINT_KIND).putLong(hinted).array());
        awaitUntil(CONVERGE_TIMEOUT, "every node above the hinted epoch",
                () -> started.stream().allMatch(n -> n.epoch() > hinted));

        SlotTable table = awaitConvergence(started, NODES.subList(0, 3)).getFirst();
        assertThat(table).isEqualTo(Placement.compute(hinted + 1, NODES.subList(0, 3), REPLICAS));
    }

    private void startNodes(int n) throws IOException {
        ports = freePorts(NODES.size());
        seeds = new ArrayList<>();
        for (int port : ports) {
            seeds.add("127.0.0.1:" + port);
        }
        for (int i = 0; i < n; i++) {
            startNode(i);
        }
    }

    private void startNode(int i) throws IOException {
        Member node = NODES.get(i);
        ClusterOptions options = ClusterOptions.of(node.id(), node.weight(), ports[i], seeds)
                .withFailureTimeout(FAILURE_TIMEOUT).withClusterName(clusterName);
        List<SlotTable> tables = new CopyOnWriteArrayList<>();
        installs.add(tables);
        SlotTableService service = SlotTableService.start(options, REPLICAS, tables::add);
        started.add(service);
    }

    /** Waits until every node in {@code nodes} has installed one table over {@code members}; returns their tables. */
    private static List<SlotTable> awaitConvergence(List<SlotTableService> nodes, List<Member> members) {
        long start = System.nanoTime();
        awaitUntil(CONVERGE_TIMEOUT, "one slot table over " + members + " on every node",
                () -> nodes.stream().allMatch(n -> n.current().members().equals(members))
                        && nodes.stream().map(SlotTableService::epoch).distinct().count() == 1);
        System.out.printf("%d nodes converged on one table in %d ms%n", nodes.size(), elapsedMillis(start));
        return nodes.stream().map(SlotTableService::current).toList();
    }
}
