package io.kvtier.cli.cluster;

import static io.kvtier.common.Json.object;

import io.kvtier.common.Json;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code kvtier cluster status --json} for machines: one JSON object with the same figures as {@link StatusTable}
 * (members, epoch, slots, replication lag, rebalancing) in named fields, plus {@code info}, every KVT.STATUS field as
 * the node sent it (strings), and with {@code --all} {@code nodes}, the other members' own reports in the same shape.
 * A pure function of its arguments; field names are stable. Written by {@link Json}.
 */
final class StatusJson {
    private StatusJson() {
    }

    static String format(ClusterInfo info, String target) {
        return format(info, target, List.of());
    }

    /** The same, with {@code nodes}: every member's own report (or its error), {@code --all}. */
    static String format(ClusterInfo info, String target, List<NodeQuery.NodeReport> others) {
        Map<String, Object> status = fields(info, target);
        if (!others.isEmpty()) {
            List<Object> nodes = new ArrayList<>();
            for (NodeQuery.NodeReport r : others) {
                nodes.add(object("id", r.id(), "endpoint", r.endpoint(), "error", r.error(), "status",
                        r.info() == null ? null : fields(r.info(), r.endpoint())));
            }
            status.put("nodes", nodes);
        }
        return Json.write(status);
    }

    private static Map<String, Object> fields(ClusterInfo info, String target) {
        Map<String, Object> o = object("target", target, "node_id", info.nodeId(), "cluster_state", info.state(),
                "epoch", info.epoch(), "serving", info.serving(), "down_reason", info.downReason(),
                "slots_with_primary", info.primarySlotsAssigned());
        o.put("slots", object("primary", info.slotsPrimary(), "owned", info.slotsOwned(), "importing",
                info.slotsImporting()));
        List<Object> members = new ArrayList<>();
        for (ClusterInfo.MemberRow m : info.members()) {
            members.add(object("id", m.id(), "endpoint", m.endpoint(), "self", m.id().equals(info.nodeId()),
                    "weight", m.weight(), "primary_slots", m.primarySlots(), "owned_slots", m.ownedSlots()));
        }
        o.put("members", members);
        ClusterInfo.Lag lag = info.lag();
        o.put("replication", object("mode", info.replication(), "replicas", info.replicas(), "inflight_writes",
                lag.writes(), "inflight_calls", lag.calls(), "inflight_bytes", lag.bytes(), "lag_ms",
                lag.oldestMillis()));
        ClusterInfo.Rebalance r = info.rebalance();
        o.put("rebalance", object("state", r.state(), "epoch", r.epoch(), "slots", r.slots(), "slots_copied",
                r.slotsCopied(), "slots_done", r.slotsDone(), "sources", r.sources(), "pass", r.pass(),
                "keys_listed", r.keysListed(), "keys", r.keys(), "bytes", r.bytes(), "started_at_ms",
                r.startedAtMillis(), "elapsed_ms", r.elapsedMillis(), "rate_bytes_per_second", r.rate()));
        ClusterInfo.Traffic t = info.traffic();
        o.put("traffic", object("replicated", t.replicated(), "replication_failures", t.replicationFailures(),
                "forwarded", t.forwarded(), "forward_failures", t.forwardFailures(), "moved", t.moved(),
                "refused_writes", t.refusedWrites(), "imported_keys", t.importedKeys(), "imported_bytes",
                t.importedBytes()));
        o.put("info", new LinkedHashMap<String, Object>(info.raw()));
        return o;
    }
}
