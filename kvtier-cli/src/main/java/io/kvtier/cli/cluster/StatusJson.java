package io.kvtier.cli.cluster;

import java.util.List;
import java.util.Map;

/**
 * {@code kvtier cluster status --json} for machines: one JSON object with the same figures as {@link StatusTable}
 * (members, epoch, slots, replication lag, rebalancing) in named fields, plus {@code info}, every CLUSTER INFO field as
 * the node sent it (strings), and with {@code --all} {@code nodes}, the other members' own reports in the same shape.
 * A pure function of its arguments; field names are stable.
 */
final class StatusJson {
    private StatusJson() {
    }

    static String format(ClusterInfo info, String target) {
        return format(info, target, List.of());
    }

    /** The same, with {@code nodes}: every member's own report (or its error), {@code --all}. */
    static String format(ClusterInfo info, String target, List<NodeQuery.NodeReport> others) {
        String body = fields(info, target).end();
        if (others.isEmpty()) {
            return body;
        }
        StringBuilder nodes = new StringBuilder("[");
        for (NodeQuery.NodeReport r : others) {
            nodes.append(nodes.length() == 1 ? "" : ",").append(new Obj().str("id", r.id())
                    .str("endpoint", r.endpoint()).str("error", r.error())
                    .raw("status", r.info() == null ? "null" : fields(r.info(), r.endpoint()).end()).end());
        }
        return body.substring(0, body.length() - 1) + ",\"nodes\":" + nodes.append(']') + "}";
    }

    private static Obj fields(ClusterInfo info, String target) {
        Obj o = new Obj();
        o.str("target", target).str("node_id", info.nodeId()).str("cluster_state", info.state())
                .num("epoch", info.epoch()).bool("serving", info.serving()).str("down_reason", info.downReason())
                .num("slots_with_primary", info.primarySlotsAssigned());
        Obj self = new Obj().num("primary", info.slotsPrimary()).num("owned", info.slotsOwned())
                .num("importing", info.slotsImporting());
        o.raw("slots", self.end());
        o.raw("members", members(info));
        ClusterInfo.Lag lag = info.lag();
        o.raw("replication", new Obj().str("mode", info.replication()).num("replicas", info.replicas())
                .num("inflight_writes", lag.writes()).num("inflight_calls", lag.calls())
                .num("inflight_bytes", lag.bytes()).num("lag_ms", lag.oldestMillis()).end());
        ClusterInfo.Rebalance r = info.rebalance();
        o.raw("rebalance", new Obj().str("state", r.state()).num("epoch", r.epoch()).num("slots", r.slots())
                .num("slots_copied", r.slotsCopied()).num("slots_done", r.slotsDone()).num("sources", r.sources())
                .num("pass", r.pass()).num("keys_listed", r.keysListed()).num("keys", r.keys())
                .num("bytes", r.bytes()).num("started_at_ms", r.startedAtMillis())
                .num("elapsed_ms", r.elapsedMillis()).num("rate_bytes_per_second", r.rate()).end());
        ClusterInfo.Traffic t = info.traffic();
        o.raw("traffic", new Obj().num("replicated", t.replicated()).num("replication_failures",
                        t.replicationFailures()).num("forwarded", t.forwarded()).num("forward_failures",
                        t.forwardFailures()).num("moved", t.moved()).num("refused_writes", t.refusedWrites())
                .num("imported_keys", t.importedKeys()).num("imported_bytes", t.importedBytes()).end());
        Obj raw = new Obj();
        for (Map.Entry<String, String> e : info.raw().entrySet()) {
            raw.str(e.getKey(), e.getValue());
        }
        o.raw("info", raw.end());
        return o;
    }

    private static String members(ClusterInfo info) {
        List<ClusterInfo.MemberRow> rows = info.members();
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < rows.size(); i++) {
            ClusterInfo.MemberRow m = rows.get(i);
            b.append(i == 0 ? "" : ",").append(new Obj().str("id", m.id()).str("endpoint", m.endpoint())
                    .bool("self", m.id().equals(info.nodeId())).num("weight", m.weight())
                    .num("primary_slots", m.primarySlots()).num("owned_slots", m.ownedSlots()).end());
        }
        return b.append(']').toString();
    }

    /** A JSON object under construction, fields in the order added. */
    private static final class Obj {
        private final StringBuilder b = new StringBuilder("{");

        private Obj key(String name) {
            if (b.length() > 1) {
                b.append(',');
            }
            b.append(quote(name)).append(':');
            return this;
        }

        Obj str(String name, String value) {
            key(name).b.append(value == null ? "null" : quote(value));
            return this;
        }

        Obj num(String name, long value) {
            key(name).b.append(value);
            return this;
        }

        Obj bool(String name, boolean value) {
            key(name).b.append(value);
            return this;
        }

        Obj raw(String name, String json) {
            key(name).b.append(json);
            return this;
        }

        String end() {
            return b.append('}').toString();
        }
    }

    /** {@code value} as a JSON string literal (RFC 8259 escapes). */
    static String quote(String value) {
        StringBuilder out = new StringBuilder(value.length() + 2).append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> out.append(c < 0x20 ? String.format("\\u%04x", (int) c) : String.valueOf(c));
            }
        }
        return out.append('"').toString();
    }
}
