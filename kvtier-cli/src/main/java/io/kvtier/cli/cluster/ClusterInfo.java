package io.kvtier.cli.cluster;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One node's KVT.STATUS reply (CLUSTER INFO plus the membership), parsed: Redis's fields, kvtier's membership and slot
 * counts, replication lag and rebalancing progress. Immutable. Fields a node does not report (an older kvtier) read as
 * 0 or "unknown"; {@link #raw} keeps every field as sent.
 *
 * @param raw every {@code name:value} line in order, member lines included
 */
record ClusterInfo(String nodeId, String state, long epoch, boolean serving, String downReason, int replicas,
                   String replication, int slotsPrimary, int slotsOwned, int slotsImporting, List<MemberRow> members,
                   Lag lag, Rebalance rebalance, Traffic traffic, Map<String, String> raw) {
    static final int SLOTS = 16384;
    private static final String MEMBER_PREFIX = "kvtier_member_";

    /** A member as the node sees it. */
    record MemberRow(String id, String endpoint, long weight, int primarySlots, int ownedSlots) {
    }

    /** Writes applied on the node whose backups have not all acknowledged them. */
    record Lag(long writes, long calls, long bytes, long oldestMillis) {
    }

    /** The node's import of the slots it took over; {@code rate} is the configured limit in bytes per second. */
    record Rebalance(String state, long epoch, int slots, int slotsCopied, int slotsDone, int sources, int pass,
                     long keysListed, long keys, long bytes, long startedAtMillis, long elapsedMillis, long rate) {
        boolean running() {
            return state.equals("waiting") || state.equals("copying");
        }
    }

    /** Counters since the node started. */
    record Traffic(long replicated, long replicationFailures, long forwarded, long forwardFailures, long moved,
                   long refusedWrites, long importedKeys, long importedBytes) {
    }

    /**
     * Parses the text of a KVT.STATUS reply.
     *
     * @throws IllegalArgumentException if it is not a kvtier node's (no {@code kvtier_node_id}), naming what it got
     */
    static ClusterInfo parse(String text) {
        Map<String, String> raw = new LinkedHashMap<>();
        List<MemberRow> members = new ArrayList<>();
        for (String line : text.split("\r?\n")) {
            line = line.strip();
            if (line.startsWith(MEMBER_PREFIX) && line.contains(":endpoint=")) {
                MemberRow m = member(line);
                members.add(m);
                raw.putIfAbsent(MEMBER_PREFIX + m.id(), line.substring(line.lastIndexOf(":endpoint=") + 1));
                continue;
            }
            int colon = line.indexOf(':');
            if (colon > 0) {
                raw.putIfAbsent(line.substring(0, colon), line.substring(colon + 1));
            }
        }
        if (!raw.containsKey("kvtier_node_id")) {
            throw new IllegalArgumentException("not a kvtier cluster node: its KVT.STATUS has no kvtier_node_id ("
                    + (raw.isEmpty() ? "empty reply" : raw.size() + " fields") + ")");
        }
        Fields f = new Fields(raw);
        return new ClusterInfo(raw.get("kvtier_node_id"), raw.getOrDefault("cluster_state", "unknown"),
                f.number("cluster_current_epoch"), f.number("kvtier_serving") == 1, raw.get("kvtier_down_reason"),
                (int) f.number("kvtier_replicas"), raw.getOrDefault("kvtier_replication", "unknown"),
                (int) f.number("kvtier_slots_primary"), (int) f.number("kvtier_slots_owned"),
                (int) f.number("kvtier_slots_importing"), List.copyOf(members),
                new Lag(f.number("kvtier_replication_inflight_writes"), f.number("kvtier_replication_inflight_calls"),
                        f.number("kvtier_replication_inflight_bytes"), f.number("kvtier_replication_lag_ms")),
                f.rebalance(), f.traffic(), Collections.unmodifiableMap(raw));
    }

    /** {@code kvtier_member_ID:endpoint=H:P,weight=W,primary_slots=N,owned_slots=M}; ids may contain ':'. */
    private static MemberRow member(String line) {
        int at = line.lastIndexOf(":endpoint=");
        String id = line.substring(MEMBER_PREFIX.length(), at);
        Map<String, String> kv = new LinkedHashMap<>();
        for (String part : line.substring(at + 1).split(",")) {
            int eq = part.indexOf('=');
            if (eq > 0) {
                kv.put(part.substring(0, eq), part.substring(eq + 1));
            }
        }
        Fields f = new Fields(kv);
        return new MemberRow(id, kv.getOrDefault("endpoint", ""), f.number("weight"), (int) f.number("primary_slots"),
                (int) f.number("owned_slots"));
    }

    /** Sum of the members' primary slots: 16384 when every slot has a primary. */
    int primarySlotsAssigned() {
        return members.stream().mapToInt(MemberRow::primarySlots).sum();
    }

    int ownedSlotsAssigned() {
        return members.stream().mapToInt(MemberRow::ownedSlots).sum();
    }

    /** Numeric fields of a map; absent or malformed ones read as 0. */
    private record Fields(Map<String, String> map) {
        long number(String name) {
            String v = map.get(name);
            if (v == null) {
                return 0;
            }
            try {
                return Long.parseLong(v.strip());
            } catch (NumberFormatException e) {
                return 0;
            }
        }

        Rebalance rebalance() {
            return new Rebalance(map.getOrDefault("kvtier_rebalance_state", "unknown"),
                    number("kvtier_rebalance_epoch"), (int) number("kvtier_rebalance_slots"),
                    (int) number("kvtier_rebalance_slots_copied"), (int) number("kvtier_rebalance_slots_done"),
                    (int) number("kvtier_rebalance_sources"), (int) number("kvtier_rebalance_pass"),
                    number("kvtier_rebalance_keys_listed"), number("kvtier_rebalance_keys"),
                    number("kvtier_rebalance_bytes"), number("kvtier_rebalance_started_at_ms"),
                    number("kvtier_rebalance_elapsed_ms"), number("kvtier_rebalance_rate"));
        }

        Traffic traffic() {
            return new Traffic(number("kvtier_replicated_total"), number("kvtier_replication_failures_total"),
                    number("kvtier_forwarded_total"), number("kvtier_forward_failures_total"),
                    number("kvtier_moved_total"), number("kvtier_refused_writes_total"),
                    number("kvtier_imported_keys_total"), number("kvtier_imported_bytes_total"));
        }
    }
}
