package io.kvtier.cli.cluster;

/** KVT.STATUS texts as kvtier nodes send them (the layout of the server's ClusterCommands.statusText). */
final class InfoSamples {
    private InfoSamples() {
    }

    /** Node n4 of four, importing at epoch 6: pass 1, 2793 of 8242 slots copied. */
    static String importing() {
        return String.join("\r\n",
                "cluster_state:ok", "cluster_slots_assigned:16384", "cluster_slots_ok:16384",
                "cluster_slots_pfail:0", "cluster_slots_fail:0", "cluster_known_nodes:4", "cluster_size:4",
                "cluster_current_epoch:6", "cluster_my_epoch:6", "kvtier_node_id:n4",
                "kvtier_members:n1@127.0.0.1:7301,n2@127.0.0.1:7302,n3@127.0.0.1:7303,n4@127.0.0.1:7304",
                "kvtier_serving:1", "kvtier_replicas:1", "kvtier_replication:sync", "kvtier_slots_primary:4141",
                "kvtier_slots_owned:8242", "kvtier_slots_importing:8242",
                "kvtier_member_n1:endpoint=127.0.0.1:7301,weight=576,primary_slots=4104,owned_slots=8238",
                "kvtier_member_n2:endpoint=127.0.0.1:7302,weight=576,primary_slots=4044,owned_slots=8089",
                "kvtier_member_n3:endpoint=127.0.0.1:7303,weight=576,primary_slots=4095,owned_slots=8199",
                "kvtier_member_n4:endpoint=127.0.0.1:7304,weight=576,primary_slots=4141,owned_slots=8242",
                "kvtier_replication_pending:0", "kvtier_replicated_total:1234", "kvtier_replication_failures_total:1",
                "kvtier_forwarded_total:9999", "kvtier_forward_failures_total:3", "kvtier_moved_total:0",
                "kvtier_refused_writes_total:0", "kvtier_imported_keys_total:3569",
                "kvtier_imported_bytes_total:14618624", "kvtier_replication_inflight_writes:3",
                "kvtier_replication_inflight_calls:4", "kvtier_replication_inflight_bytes:12336",
                "kvtier_replication_lag_ms:130", "kvtier_rebalance_state:copying", "kvtier_rebalance_epoch:6",
                "kvtier_rebalance_slots:8242", "kvtier_rebalance_slots_copied:2793", "kvtier_rebalance_slots_done:0",
                "kvtier_rebalance_sources:3", "kvtier_rebalance_pass:1", "kvtier_rebalance_keys_listed:3600",
                "kvtier_rebalance_keys:3569", "kvtier_rebalance_bytes:14618624",
                "kvtier_rebalance_started_at_ms:1795400000000", "kvtier_rebalance_elapsed_ms:14753",
                "kvtier_rebalance_rate:1048576", "");
    }

    /** A node whose id has colons (the default id is host:port), in a minority and not serving. */
    static String downWithColonIds() {
        return String.join("\r\n",
                "cluster_state:fail", "cluster_known_nodes:1", "cluster_current_epoch:9",
                "kvtier_node_id:10.0.0.1:6379", "kvtier_serving:0",
                "kvtier_down_reason:this node sees 1 of the 3 members it last served with (a minority)",
                "kvtier_replicas:1", "kvtier_replication:async", "kvtier_slots_primary:16384",
                "kvtier_slots_owned:16384", "kvtier_slots_importing:0",
                "kvtier_member_10.0.0.1:6379:endpoint=10.0.0.1:6379,weight=9216,primary_slots=16384,"
                        + "owned_slots=16384", "");
    }
}
