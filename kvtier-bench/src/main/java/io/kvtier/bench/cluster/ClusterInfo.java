package io.kvtier.bench.cluster;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One node's CLUSTER INFO, parsed: Redis's fields ({@code cluster_current_epoch}, {@code cluster_known_nodes}) and
 * kvtier's ({@code kvtier_serving}, {@code kvtier_slots_importing}). Immutable.
 */
public record ClusterInfo(Map<String, String> fields) {
    public ClusterInfo {
        fields = Map.copyOf(fields);
    }

    /** {@code name:value} lines; others (blank, {@code # section}) are skipped. */
    public static ClusterInfo parse(String text) {
        Map<String, String> fields = new LinkedHashMap<>();
        for (String line : text.split("\r?\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && !line.startsWith("#")) {
                fields.put(line.substring(0, colon).trim(), line.substring(colon + 1).trim());
            }
        }
        return new ClusterInfo(fields);
    }

    public long epoch() {
        return number("cluster_current_epoch");
    }

    public int knownNodes() {
        return (int) number("cluster_known_nodes");
    }

    /** Slots this node still copies from others after a table change. */
    public int importing() {
        return (int) number("kvtier_slots_importing");
    }

    /** A member back or new is about to get the lead of its slots (a handoff): the table is not final yet. */
    public boolean rebalancePending() {
        return "1".equals(fields.get("kvtier_rebalance_pending"));
    }

    /** Slots this node leads but still answers TRYAGAIN for: a handoff not every member has confirmed yet. */
    public int fenced() {
        return fields.containsKey("kvtier_slots_fenced") ? (int) number("kvtier_slots_fenced") : 0; // older builds
    }

    /** False while the node refuses keys (-CLUSTERDOWN: a minority, paused, not joined yet). */
    public boolean serving() {
        return "1".equals(fields.get("kvtier_serving"));
    }

    private long number(String name) {
        String v = fields.get(name);
        if (v == null) {
            throw new IllegalStateException("CLUSTER INFO has no " + name + " (is this a kvtier cluster node?)");
        }
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalStateException("CLUSTER INFO " + name + " is '" + v + "', not a number", e);
        }
    }
}
