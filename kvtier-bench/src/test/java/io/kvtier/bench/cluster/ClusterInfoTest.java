package io.kvtier.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class ClusterInfoTest {
    static ClusterInfo info(long epoch, int nodes, int importing, boolean serving) {
        return ClusterInfo.parse("cluster_state:ok\r\ncluster_known_nodes:" + nodes + "\r\ncluster_current_epoch:"
                + epoch + "\r\nkvtier_serving:" + (serving ? 1 : 0) + "\r\nkvtier_slots_importing:" + importing
                + "\r\n");
    }

    @Test
    void readsRedisAndKvtierFields() {
        ClusterInfo i = ClusterInfo.parse("cluster_state:ok\r\ncluster_known_nodes:3\r\ncluster_current_epoch:7\r\n"
                + "kvtier_members:n1@127.0.0.1:7001,n2@127.0.0.1:7002\r\nkvtier_serving:1\r\n"
                + "kvtier_slots_importing:12\r\n");

        assertThat(i.epoch()).isEqualTo(7);
        assertThat(i.knownNodes()).isEqualTo(3);
        assertThat(i.importing()).isEqualTo(12);
        assertThat(i.serving()).isTrue();
        assertThat(i.fields()).containsEntry("kvtier_members", "n1@127.0.0.1:7001,n2@127.0.0.1:7002");
    }

    @Test
    void aMissingFieldSaysThisIsProbablyNotAKvtierNode() {
        assertThatThrownBy(() -> ClusterInfo.parse("cluster_state:ok\r\n").epoch())
                .hasMessageContaining("no cluster_current_epoch (is this a kvtier cluster node?)");
    }

    @Test
    void nodesAgreeOnlyOnOneEpochWithTheMembersAndNothingToImport() {
        assertThat(LocalCluster.agreed(List.of(info(5, 3, 0, true), info(5, 3, 0, true)), 3)).isTrue();
        assertThat(LocalCluster.agreed(List.of(info(5, 3, 0, true), info(4, 3, 0, true)), 3)).isFalse();
        assertThat(LocalCluster.agreed(List.of(info(5, 3, 0, true), info(5, 3, 9, true)), 3)).isFalse();
        assertThat(LocalCluster.agreed(List.of(info(5, 3, 0, true), info(5, 3, 0, false)), 3)).isFalse();
        assertThat(LocalCluster.agreed(List.of(info(5, 2, 0, true)), 3)).isFalse();
        assertThat(LocalCluster.agreed(List.of(), 3)).isFalse();
    }
}
