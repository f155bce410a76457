package io.kvtier.cli.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ClusterInfoTest {
    @Test
    void readsMembersSlotsLagAndRebalancingFromAKvtierNode() {
        ClusterInfo info = ClusterInfo.parse(InfoSamples.importing());
        assertThat(info.nodeId()).isEqualTo("n4");
        assertThat(info.state()).isEqualTo("ok");
        assertThat(info.epoch()).isEqualTo(6);
        assertThat(info.serving()).isTrue();
        assertThat(info.members()).extracting(ClusterInfo.MemberRow::id).containsExactly("n1", "n2", "n3", "n4");
        assertThat(info.members().get(0)).isEqualTo(new ClusterInfo.MemberRow("n1", "127.0.0.1:7301", 576, 4104,
                8238));
        assertThat(info.primarySlotsAssigned()).isEqualTo(ClusterInfo.SLOTS);
        assertThat(info.ownedSlotsAssigned()).isEqualTo(2 * ClusterInfo.SLOTS);
        assertThat(info.lag()).isEqualTo(new ClusterInfo.Lag(3, 4, 12336, 130));
        assertThat(info.rebalance()).isEqualTo(new ClusterInfo.Rebalance("copying", 6, 8242, 2793, 0, 3, 1, 3600,
                3569, 14618624, 1795400000000L, 14753, 1 << 20));
        assertThat(info.rebalance().running()).isTrue();
        assertThat(info.traffic().forwarded()).isEqualTo(9999);
        assertThat(info.raw()).containsEntry("cluster_known_nodes", "4")
                .containsEntry("kvtier_member_n2", "endpoint=127.0.0.1:7302,weight=576,primary_slots=4044,"
                        + "owned_slots=8089");
    }

    @Test
    void memberIdsMayContainColons() {
        ClusterInfo info = ClusterInfo.parse(InfoSamples.downWithColonIds());
        assertThat(info.nodeId()).isEqualTo("10.0.0.1:6379");
        assertThat(info.members()).singleElement().isEqualTo(new ClusterInfo.MemberRow("10.0.0.1:6379",
                "10.0.0.1:6379", 9216, 16384, 16384));
        assertThat(info.serving()).isFalse();
        assertThat(info.downReason()).contains("a minority");
    }

    @Test
    void fieldsAnOlderNodeDoesNotSendReadAsZeroOrUnknown() {
        ClusterInfo info = ClusterInfo.parse(InfoSamples.downWithColonIds());
        assertThat(info.lag()).isEqualTo(new ClusterInfo.Lag(0, 0, 0, 0));
        assertThat(info.rebalance().state()).isEqualTo("unknown");
        assertThat(info.rebalance().running()).isFalse();
    }

    @Test
    void refusesTheClusterInfoOfANodeThatIsNotKvtier() {
        String redis = "cluster_state:ok\r\ncluster_slots_assigned:16384\r\ncluster_known_nodes:6\r\n";
        assertThatThrownBy(() -> ClusterInfo.parse(redis)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("not a kvtier cluster node: its KVT.STATUS has no kvtier_node_id (3 fields)");
        assertThatThrownBy(() -> ClusterInfo.parse("")).hasMessageContaining("(empty reply)");
    }
}
