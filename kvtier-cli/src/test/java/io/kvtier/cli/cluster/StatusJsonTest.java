package io.kvtier.cli.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.common.Json;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class StatusJsonTest {
    @Test
    void namesEveryFigureAndKeepsTheRawFields() {
        Map<String, Object> json = parse(StatusJson.format(ClusterInfo.parse(InfoSamples.importing()), "127.0.0.1:7304"));
        assertThat(List.copyOf(json.keySet())).containsExactly("target", "node_id", "cluster_state", "epoch",
                "serving", "down_reason", "slots_with_primary", "slots", "members", "replication", "rebalance",
                "traffic", "info");
        assertThat(json.get("target")).isEqualTo("127.0.0.1:7304");
        assertThat(json.get("node_id")).isEqualTo("n4");
        assertThat(json.get("serving")).isEqualTo(true);
        assertThat(json.get("down_reason")).isNull();
        assertThat(number(json, "epoch")).isEqualTo(6);
        assertThat(number(json, "slots_with_primary")).isEqualTo(16384);
        assertThat(object(json, "slots")).containsEntry("primary", 4141L).containsEntry("owned", 8242L)
                .containsEntry("importing", 8242L);
        List<?> members = (List<?>) json.get("members");
        assertThat(members).hasSize(4);
        assertThat(map(members.getFirst())).containsEntry("id", "n1").containsEntry("endpoint",
                "127.0.0.1:7301").containsEntry("self", false).containsEntry("weight", 576L)
                .containsEntry("primary_slots", 4104L).containsEntry("owned_slots", 8238L);
        assertThat(members).anySatisfy(m -> assertThat(map(m)).containsEntry("self", true));
        assertThat(object(json, "replication")).containsEntry("mode", "sync").containsEntry("replicas", 1L)
                .containsEntry("inflight_writes", 3L).containsEntry("inflight_calls", 4L)
                .containsEntry("inflight_bytes", 12336L).containsEntry("lag_ms", 130L);
        assertThat(object(json, "rebalance")).containsEntry("state", "copying").containsEntry("slots", 8242L)
                .containsEntry("slots_copied", 2793L).containsEntry("sources", 3L).containsEntry("keys", 3569L)
                .containsEntry("bytes", 14618624L).containsEntry("elapsed_ms", 14753L)
                .containsEntry("rate_bytes_per_second", 1048576L);
        assertThat(object(json, "info")).containsEntry("cluster_state", "ok")
                .containsEntry("kvtier_rebalance_rate", "1048576");
    }

    @Test
    void escapesTextAndAddsEveryMembersReportWhenAsked() {
        List<NodeQuery.NodeReport> others = List.of(new NodeQuery.NodeReport("n2", "127.0.0.1:7302", null,
                "cannot reach 127.0.0.1:7302: \"refused\"\n"));
        String text = StatusJson.format(ClusterInfo.parse(InfoSamples.downWithColonIds()), "h:1", others);
        assertThat(text).contains("\"cannot reach 127.0.0.1:7302: \\\"refused\\\"\\n\"");
        Map<String, Object> json = parse(text);
        assertThat(json.get("down_reason"))
                .isEqualTo("this node sees 1 of the 3 members it last served with (a minority)");
        assertThat((List<?>) json.get("nodes")).singleElement().satisfies(n -> assertThat(map(n))
                .containsEntry("id", "n2").containsEntry("error", "cannot reach 127.0.0.1:7302: \"refused\"\n")
                .containsEntry("status", null));
    }

    private static Map<String, Object> parse(String json) {
        return map(Json.parse(json));
    }

    /** A parsed object, its whole numbers (the parser's BigDecimals) as longs. */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object json) {
        Map<String, Object> out = new java.util.LinkedHashMap<>();
        ((Map<String, Object>) json).forEach((k, v) -> out.put(k, v instanceof java.math.BigDecimal d
                ? (Object) d.longValueExact() : v));
        return out;
    }

    private static Map<String, Object> object(Map<String, Object> json, String name) {
        return map(json.get(name));
    }

    private static long number(Map<String, Object> json, String name) {
        return ((Number) json.get(name)).longValue();
    }
}
