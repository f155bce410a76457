package io.kvtier.server.metrics;

import io.kvtier.cluster.Member;
import io.kvtier.cluster.SlotTable;
import io.kvtier.cluster.node.ClusterCounters;
import io.kvtier.cluster.node.ClusterNode;
import io.kvtier.cluster.node.ImportProgress;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToDoubleFunction;

/**
 * The cluster's Prometheus metrics, the same figures as CLUSTER INFO: membership, this node's slots, replication
 * (traffic, failures, lag), forwarding and rebalancing progress. Registered only on a cluster node; every value is
 * read from the {@link ClusterNode} when {@code /metrics} is scraped, so nothing is recorded on the command path.
 */
final class ClusterMetrics {
    private final PrometheusRegistry registry;
    private final ClusterNode node;

    private ClusterMetrics(PrometheusRegistry registry, ClusterNode node) {
        this.registry = registry;
        this.node = node;
    }

    static void register(PrometheusRegistry registry, ClusterNode node) {
        ClusterMetrics m = new ClusterMetrics(registry, node);
        m.membership();
        m.replication();
        m.traffic();
        m.rebalancing();
    }

    private void membership() {
        gauge("kvtier_cluster_members", "Members of the slot table this node serves", n -> table().members().size());
        gauge("kvtier_cluster_epoch", "Epoch of the slot table this node serves", n -> table().epoch());
        gauge("kvtier_cluster_serving", "1 while this node serves keys, 0 while it is down (minority, paused, joining)",
                n -> n.topology().serving() ? 1 : 0);
        gauge("kvtier_cluster_slots_primary", "Slots this node is primary for", n -> {
            ClusterNode.Topology t = n.topology();
            return t.table().primaryCount(t.self());
        });
        gauge("kvtier_cluster_slots_owned", "Slots this node holds as primary or backup", n -> {
            ClusterNode.Topology t = n.topology();
            return t.table().ownedCount(t.self());
        });
        gauge("kvtier_cluster_slots_importing", "Slots this node owns but is still importing",
                ClusterNode::importingSlots);
        gauge("kvtier_cluster_slots_waiting_for_copy", "Slots this node imports that no node within reach holds a "
                + "complete copy of (they serve once one is back, or after kvtier cluster accept-loss)",
                n -> n.waitingSlots().cardinality());
        gauge("kvtier_cluster_members_down", "Members placed but not up (their slots run on their other copies)",
                n -> n.config() == null ? 0 : n.config().current().down().size());
        gauge("kvtier_cluster_voters", "Raft voters of the cluster's configuration", n -> n.quorum().voters().size());
        gauge("kvtier_cluster_voter_failures_tolerated", "How many more voters may fail before the cluster stops "
                + "(no table change, no lease)", n -> n.quorum().failuresTolerated());
        GaugeWithCallback.builder().name("kvtier_cluster_member_slots")
                .help("Slots per member of the table as this node sees it, as primary and as any owner")
                .labelNames("member", "role").callback(cb -> {
                    SlotTable t = table();
                    for (Member m : t.members()) {
                        cb.call(t.primaryCount(m), m.id(), "primary");
                        cb.call(t.ownedCount(m), m.id(), "owned");
                    }
                }).register(registry);
    }

    private void replication() {
        gauge("kvtier_cluster_replicas", "Backups per slot", n -> table().replicas());
        gauge("kvtier_cluster_replication_inflight_writes",
                "Writes applied here whose backups have not all acknowledged them", n -> n.replicationBacklog.writes());
        gauge("kvtier_cluster_replication_inflight_calls", "Replication calls to backups not answered yet",
                n -> n.replicationBacklog.calls());
        gauge("kvtier_cluster_replication_inflight_bytes", "Key and value bytes of those calls",
                n -> n.replicationBacklog.bytes());
        gauge("kvtier_cluster_replication_lag_seconds", "Age of the oldest write not acknowledged by all backups",
                n -> n.replicationBacklog.oldestAgeMillis() / 1e3);
        counter("kvtier_cluster_replicated", "Key states replicated and acknowledged", node.counters.replicated());
        counter("kvtier_cluster_replication_failures", "Writes whose replication failed (answered TRYAGAIN)",
                node.counters.replicationFailures());
    }

    private void traffic() {
        ClusterCounters c = node.counters;
        counter("kvtier_cluster_forwarded", "Commands forwarded to the primary of their slot", c.forwarded());
        counter("kvtier_cluster_forward_failures", "Forwarded commands that failed", c.forwardFailures());
        counter("kvtier_cluster_moved", "-MOVED replies to cluster-aware clients", c.movedReplies());
        counter("kvtier_cluster_refused_writes", "Writes refused while installing a newer table", c.refusedWrites());
        counter("kvtier_cluster_late_peer_requests",
                "Peer writes refused: they arrived after their sender gave up, or were older than one applied",
                c.lateRequests());
        counter("kvtier_cluster_imported_keys", "Values copied into this node by state transfer", c.fetchedKeys());
        counter("kvtier_cluster_imported_bytes", "Bytes copied into this node by state transfer", c.fetchedBytes());
    }

    private void rebalancing() {
        importGauge("kvtier_cluster_import_slots", "Slots to import in the current (or last) import", s -> s.slots());
        importGauge("kvtier_cluster_import_slots_copied", "Of those, slots whose first copy pass is through",
                s -> s.slotsCopied());
        importGauge("kvtier_cluster_import_slots_done", "Of those, slots complete", s -> s.slotsDone());
        importGauge("kvtier_cluster_import_progress_ratio", "Slots done of slots to import (1 when nothing is to do)",
                s -> s.slots() == 0 ? 1 : (double) s.slotsDone() / s.slots());
        importGauge("kvtier_cluster_import_sources", "Members the current import copies from", s -> s.sources());
        importGauge("kvtier_cluster_import_keys", "Values copied by the current import", s -> s.keys());
        importGauge("kvtier_cluster_import_bytes", "Bytes copied by the current import", s -> s.bytes());
        importGauge("kvtier_cluster_import_elapsed_seconds", "Time the current import has taken",
                s -> s.elapsedMillis() / 1e3);
        importGauge("kvtier_cluster_import_running", "1 while an import is waiting for sources or copying",
                s -> s.phase() == ImportProgress.Phase.WAITING || s.phase() == ImportProgress.Phase.COPYING ? 1 : 0);
        gauge("kvtier_cluster_rebalance_rate_bytes", "Configured --rebalance-rate, bytes per second",
                n -> n.settings().rebalanceBytesPerSecond());
    }

    private SlotTable table() {
        return node.topology().table();
    }

    private void gauge(String name, String help, ToDoubleFunction<ClusterNode> value) {
        GaugeWithCallback.builder().name(name).help(help).callback(cb -> cb.call(value.applyAsDouble(node)))
                .register(registry);
    }

    private void importGauge(String name, String help, ToDoubleFunction<ImportProgress.Status> value) {
        GaugeWithCallback.builder().name(name).help(help)
                .callback(cb -> cb.call(value.applyAsDouble(node.importProgress.status()))).register(registry);
    }

    private void counter(String name, String help, LongAdder adder) {
        CounterWithCallback.builder().name(name).help(help).callback(cb -> cb.call(adder.sum())).register(registry);
    }
}
