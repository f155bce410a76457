package io.kvtier.server.command;

import io.kvtier.cluster.node.ClusterNode;
import io.kvtier.cluster.node.ImportProgress;
import io.kvtier.cluster.node.ReplicationBacklog;

/**
 * CLUSTER INFO's fields on work in progress: the replication lag (writes applied here whose backups have not all
 * acknowledged them) and the rebalancing progress (this node's import of the slots it took over). Stateless; every
 * value is read when the command runs.
 */
final class ClusterProgressInfo {
    private ClusterProgressInfo() {
    }

    /** Appends the fields, {@code name:value} lines, to {@code b}. */
    static void append(StringBuilder b, ClusterNode node) {
        ReplicationBacklog lag = node.replicationBacklog;
        field(b, "kvtier_replication_inflight_writes", lag.writes());
        field(b, "kvtier_replication_inflight_calls", lag.calls());
        field(b, "kvtier_replication_inflight_bytes", lag.bytes());
        field(b, "kvtier_replication_lag_ms", lag.oldestAgeMillis());
        ImportProgress.Status s = node.importProgress.status();
        b.append("kvtier_rebalance_state:").append(s.phase()).append("\r\n");
        field(b, "kvtier_rebalance_epoch", s.epoch());
        field(b, "kvtier_rebalance_slots", s.slots());
        field(b, "kvtier_rebalance_slots_copied", s.slotsCopied());
        field(b, "kvtier_rebalance_slots_done", s.slotsDone());
        field(b, "kvtier_rebalance_sources", s.sources());
        field(b, "kvtier_rebalance_pass", s.pass());
        field(b, "kvtier_rebalance_keys_listed", s.keysListed());
        field(b, "kvtier_rebalance_keys", s.keys());
        field(b, "kvtier_rebalance_bytes", s.bytes());
        field(b, "kvtier_rebalance_started_at_ms", s.startedAtMillis());
        field(b, "kvtier_rebalance_elapsed_ms", s.elapsedMillis());
        field(b, "kvtier_rebalance_rate", node.settings().rebalanceBytesPerSecond());
    }

    private static void field(StringBuilder b, String name, long value) {
        b.append(name).append(':').append(value).append("\r\n");
    }
}
