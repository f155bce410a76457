package io.kvtier.cluster.membership;

import static io.kvtier.cluster.ClusterTesting.awaitUntil;
import static io.kvtier.cluster.ClusterTesting.elapsedMillis;
import static io.kvtier.cluster.ClusterTesting.freePorts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.assertj.core.api.Assertions.tuple;

import io.kvtier.cluster.Member;
import io.kvtier.cluster.Placement;
import io.kvtier.cluster.SlotTable;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.jgroups.protocols.DISCARD;
import org.jgroups.protocols.TCP;
import org.jgroups.stack.ProtocolStack;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Real JGroups channels, three nodes in this JVM on 127.0.0.1. Timeouts are generous for a loaded 2-core machine; the
 * assertions on how fast a node is removed bound the time, they do not measure it.
 */
class MembershipTest {
    private static final Duration FORM_TIMEOUT = Duration.ofSeconds(20);
    private static final Duration FAILURE_TIMEOUT = Duration.ofSeconds(2);
    private static final List<Member> NODES = List.of(new Member("node-a", 1_000, "127.0.0.1:16001"),
            new Member("node-b", 2_000, "127.0.0.1:16002"), new Member("node-c", 3_000, "[::1]:16003"));

    private final String clusterName = "kvtier-test-" + UUID.randomUUID();
    private final List<Membership> started = new ArrayList<>();
    private final List<Recorder> recorders = new ArrayList<>();

    @AfterEach
    void closeAll() {
        started.forEach(Membership::close);
    }

    @Test
    void threeSeededNodesFormOneViewWithTheirWeightsAndEndpoints() throws IOException {
        List<Membership> nodes = startCluster();

        for (int i = 0; i < nodes.size(); i++) {
            assertThat(nodes.get(i).members()).containsExactlyElementsOf(NODES);
            assertThat(nodes.get(i).viewId()).isEqualTo(nodes.getFirst().viewId());
            assertThat(recorders.get(i).last()).containsExactlyElementsOf(NODES);
            assertThat(nodes.get(i).self()).isEqualTo(NODES.get(i));
        }
        assertThat(nodes).filteredOn(Membership::isCoordinator).containsExactly(nodes.getFirst());
    }

    @Test
    void everyNodeSeesTheEndpointEachMemberAdvertised() throws IOException {
        List<Membership> nodes = startCluster();

        for (Membership node : nodes) {
            assertThat(node.members()).extracting(Member::id, Member::endpoint).containsExactly(
                    tuple("node-a", "127.0.0.1:16001"), tuple("node-b", "127.0.0.1:16002"),
                    tuple("node-c", "[::1]:16003"));
        }
    }

    @Test
    void everyNodeComputesTheSameSlotTableFromItsView() throws IOException {
        List<Membership> nodes = startCluster();

        List<SlotTable> tables = nodes.stream().map(n -> Placement.compute(n.viewId(), n.members(), 1)).toList();

        assertThat(tables).allSatisfy(table -> assertThat(table).isEqualTo(tables.getFirst()));
        assertThat(tables.getFirst().members()).containsExactlyElementsOf(NODES);
    }

    @Test
    void gracefullyClosedNodeLeavesTheOthersViewsPromptly() throws IOException {
        List<Membership> nodes = startCluster();

        long start = System.nanoTime();
        nodes.get(2).close();
        nodes.get(2).close(); // idempotent

        // A view is installed (members()) before it is handed to the listener: wait for both.
        awaitUntil(Duration.ofSeconds(5), "node-c gone from node-a's and node-b's views and listeners",
                () -> nodes.get(0).members().size() == 2 && nodes.get(1).members().size() == 2
                        && recorders.get(0).last().size() == 2 && recorders.get(1).last().size() == 2);
        System.out.printf("graceful leave seen by all in %d ms%n", elapsedMillis(start));
        assertThat(nodes.get(0).members()).containsExactly(NODES.get(0), NODES.get(1));
        assertThat(recorders.get(1).last()).containsExactly(NODES.get(0), NODES.get(1));
    }

    /**
     * Not a crash: a DISCARD protocol inserted above node-c's transport drops everything it sends and receives, as
     * if the process hung or its network were cut. Its sockets stay open, so FD_SOCK2 sees nothing and exclusion is
     * FD_ALL3's heartbeat timeout plus VERIFY_SUSPECT2's check. A killed process (sockets closed by the kernel, the
     * FD_SOCK2 path) needs separate processes and is left to the multi-process integration tests.
     */
    @Test
    void nodeThatStopsRespondingIsExcludedWithinTheFailureTimeout() throws Exception {
        List<Membership> nodes = startCluster();
        DISCARD discard = new DISCARD().discardAll(true);
        discard.setAddress(nodes.get(2).channel().getAddress());

        long start = System.nanoTime();
        nodes.get(2).channel().getProtocolStack().insertProtocol(discard, ProtocolStack.Position.ABOVE, TCP.class);

        awaitUntil(FAILURE_TIMEOUT.plusSeconds(8), "silent node-c excluded from node-a's and node-b's views",
                () -> nodes.get(0).members().size() == 2 && nodes.get(1).members().size() == 2);
        System.out.printf("silent node excluded in %d ms (failure timeout %d ms)%n", elapsedMillis(start),
                FAILURE_TIMEOUT.toMillis());
        assertThat(nodes.get(1).members()).containsExactly(NODES.get(0), NODES.get(1));
    }

    /** Starts node-a, node-b, node-c in turn (each seeded with all three ports) and waits for the 3-member view. */
    private List<Membership> startCluster() throws IOException {
        int[] ports = freePorts(NODES.size());
        List<String> seeds = new ArrayList<>();
        for (int port : ports) {
            seeds.add("127.0.0.1:" + port);
        }
        long start = System.nanoTime();
        for (int i = 0; i < NODES.size(); i++) {
            Member node = NODES.get(i);
            ClusterOptions options = ClusterOptions.of(node.id(), node.weight(), ports[i], seeds)
                    .withFailureTimeout(FAILURE_TIMEOUT).withClusterName(clusterName).withEndpoint(node.endpoint());
            Recorder recorder = new Recorder();
            recorders.add(recorder);
            started.add(Membership.join(options, recorder));
        }
        awaitUntil(FORM_TIMEOUT, "one view of three on every node",
                () -> started.stream().allMatch(m -> m.members().size() == NODES.size())
                        && started.stream().map(Membership::viewId).distinct().count() == 1
                        && recorders.stream().allMatch(r -> r.last().size() == NODES.size()));
        System.out.printf("cluster of %d formed in %d ms%n", NODES.size(), elapsedMillis(start));
        return List.copyOf(started);
    }

    /** Records every view a listener is given and fails the test if two calls ever overlap. */
    private static final class Recorder implements Membership.Listener {
        private final List<List<Member>> views = new CopyOnWriteArrayList<>();
        private final AtomicInteger inside = new AtomicInteger();

        @Override
        public void viewChanged(long viewId, List<Member> members) {
            if (inside.incrementAndGet() != 1) {
                fail("listener called concurrently");
            }
            views.add(members);
            inside.decrementAndGet();
        }

        List<Member> last() {
            return views.isEmpty() ? List.of() : views.getLast();
        }
    }
}
