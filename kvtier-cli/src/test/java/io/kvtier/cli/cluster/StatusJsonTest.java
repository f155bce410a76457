package io.kvtier.cli.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class StatusJsonTest {
    @Test
    void namesEveryFigureAndKeepsTheRawFields() {
        String json = StatusJson.format(ClusterInfo.parse(InfoSamples.importing()), "127.0.0.1:7304");
        assertThat(json).startsWith("{\"target\":\"127.0.0.1:7304\",\"node_id\":\"n4\",\"cluster_state\":\"ok\","
                        + "\"epoch\":6,\"serving\":true,\"down_reason\":null,\"slots_with_primary\":16384,"
                        + "\"slots\":{\"primary\":4141,\"owned\":8242,\"importing\":8242},\"members\":[")
                .contains("{\"id\":\"n1\",\"endpoint\":\"127.0.0.1:7301\",\"self\":false,\"weight\":576,"
                        + "\"primary_slots\":4104,\"owned_slots\":8238}")
                .contains("\"self\":true")
                .contains("\"replication\":{\"mode\":\"sync\",\"replicas\":1,\"inflight_writes\":3,"
                        + "\"inflight_calls\":4,\"inflight_bytes\":12336,\"lag_ms\":130}")
                .contains("\"rebalance\":{\"state\":\"copying\",\"epoch\":6,\"slots\":8242,\"slots_copied\":2793,"
                        + "\"slots_done\":0,\"sources\":3,\"pass\":1,\"keys_listed\":3600,\"keys\":3569,"
                        + "\"bytes\":14618624,\"started_at_ms\":1795400000000,\"elapsed_ms\":14753,"
                        + "\"rate_bytes_per_second\":1048576}")
                .contains("\"info\":{\"cluster_state\":\"ok\",")
                .contains("\"kvtier_rebalance_rate\":\"1048576\"")
                .endsWith("}}")
                .doesNotContain("\"nodes\"");
        assertThat(json.chars().filter(c -> c == '{').count()).isEqualTo(json.chars().filter(c -> c == '}').count());
    }

    @Test
    void escapesTextAndAddsEveryMembersReportWhenAsked() {
        List<NodeQuery.NodeReport> others = List.of(new NodeQuery.NodeReport("n2", "127.0.0.1:7302", null,
                "cannot reach 127.0.0.1:7302: \"refused\"\n"));
        String json = StatusJson.format(ClusterInfo.parse(InfoSamples.downWithColonIds()), "h:1", others);
        assertThat(json).contains("\"down_reason\":\"this node sees 1 of the 3 members it last served with (a "
                        + "minority)\"")
                .endsWith(",\"nodes\":[{\"id\":\"n2\",\"endpoint\":\"127.0.0.1:7302\",\"error\":\"cannot reach "
                        + "127.0.0.1:7302: \\\"refused\\\"\\n\",\"status\":null}]}");
        assertThat(StatusJson.quote("a\\b\u0001")).isEqualTo("\"a\\\\b\\u0001\"");
    }
}
