package io.kvtier.server.command;

import static io.kvtier.server.command.CommandSpec.container;
import static io.kvtier.server.command.CommandSpec.of;

import io.kvtier.cluster.Member;
import io.kvtier.client.cluster.SlotHash;
import io.kvtier.cluster.SlotTable;
import io.kvtier.resp.RespCommand;
import io.kvtier.server.cluster.ClusterNode;
import io.kvtier.server.net.Reply;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import io.kvtier.store.TieredStore;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/*
 * Redis Cluster's view of kvtier's placement. Redis pairs each primary with fixed replicas; kvtier places every slot's
 * owners independently (rendezvous hashing), so a node is primary for some slots and backup for others. The replies
 * map that faithfully where Redis's format allows: CLUSTER SLOTS and SHARDS list each run of consecutive slots with the
 * same owners (primary first), which is exactly what cluster clients route by; CLUSTER NODES, which can only say
 * "master" or "slave of X", lists every node as a master with the slots it is primary for. Node ids are the SHA-1 of
 * the kvtier node id in hex (40 characters, as clients expect).
 */

/** CLUSTER subcommands, READONLY, READWRITE and ASKING. */
final class ClusterCommands {
    private ClusterCommands() {
    }

    static List<CommandSpec> specs() {
        return List.of(
                container("cluster", -2,
                        of("cluster|slots", 2, "loading stale", 0, 0, 0, ClusterCommands::slots),
                        of("cluster|shards", 2, "loading stale", 0, 0, 0, ClusterCommands::shards),
                        of("cluster|nodes", 2, "loading stale", 0, 0, 0, ClusterCommands::nodes),
                        of("cluster|myid", 2, "loading stale", 0, 0, 0, ClusterCommands::myid),
                        of("cluster|info", 2, "loading stale", 0, 0, 0, ClusterCommands::info),
                        of("cluster|keyslot", 3, "stale", 0, 0, 0, (s, c, r) -> {
                            r.integer(SlotHash.slot(c.bytes(2)));
                            return null;
                        }),
                        of("cluster|countkeysinslot", 3, "stale", 0, 0, 0, ClusterCommands::countKeysInSlot),
                        of("cluster|getkeysinslot", 4, "stale", 0, 0, 0, ClusterCommands::getKeysInSlot)),
                of("readonly", 1, "loading stale fast", 0, 0, 0, (s, c, r) -> {
                    node(s);
                    s.readOnly = true;
                    s.clusterAware = true;
                    r.ok();
                    return null;
                }),
                of("readwrite", 1, "loading stale fast", 0, 0, 0, (s, c, r) -> {
                    node(s);
                    s.readOnly = false;
                    r.ok();
                    return null;
                }),
                of("asking", 1, "fast", 0, 0, 0, (s, c, r) -> {
                    node(s);
                    r.ok();
                    return null;
                }));
    }

    private static ClusterNode node(Session s) {
        ClusterNode node = s.server.cluster();
        if (node == null) {
            throw new CommandException("ERR This instance has cluster support disabled");
        }
        return node;
    }

    /** The 40-hex-digit id Redis Cluster clients expect, derived from the kvtier node id. */
    static String redisId(Member m) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1")
                    .digest(m.id().getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Runs of consecutive slots with the same owners: [start, end, owner index...]. */
    static List<int[]> runs(SlotTable table) {
        List<int[]> out = new ArrayList<>();
        if (!table.isOwned()) {
            return out;
        }
        List<Member> members = table.members();
        int start = 0;
        List<Member> current = table.owners(0);
        for (int s = 1; s <= SlotHash.SLOTS; s++) {
            List<Member> next = s < SlotHash.SLOTS ? table.owners(s) : null;
            if (next == null || !next.equals(current)) {
                int[] run = new int[2 + current.size()];
                run[0] = start;
                run[1] = s - 1;
                for (int k = 0; k < current.size(); k++) {
                    run[2 + k] = members.indexOf(current.get(k));
                }
                out.add(run);
                start = s;
                current = next;
            }
        }
        return out;
    }

    private static ClusterNode.Topology served(Session s) {
        ClusterNode node = node(s);
        s.clusterAware = true;
        return node.topology();
    }

    private static CompletableFuture<Void> slots(Session s, RespCommand c, Reply r) {
        ClusterNode.Topology t = served(s);
        List<Member> members = t.table().members();
        List<String> ids = members.stream().map(ClusterCommands::redisId).toList(); // once, not per range
        List<int[]> runs = runs(t.table());
        r.array(runs.size());
        for (int[] run : runs) {
            r.array(run.length);
            r.integer(run[0]);
            r.integer(run[1]);
            for (int k = 2; k < run.length; k++) {
                Member m = members.get(run[k]);
                r.array(3);
                r.bulk(m.host());
                r.integer(m.port());
                r.bulk(ids.get(run[k]));
            }
        }
        return null;
    }

    private static CompletableFuture<Void> shards(Session s, RespCommand c, Reply r) {
        boolean tlsCluster = s.server.options().tls() != null && s.server.options().tls().cluster();
        ClusterNode.Topology t = served(s);
        List<Member> members = t.table().members();
        Map<List<Integer>, List<int[]>> byOwners = new LinkedHashMap<>();
        for (int[] run : runs(t.table())) {
            List<Integer> owners = new ArrayList<>();
            for (int k = 2; k < run.length; k++) {
                owners.add(run[k]);
            }
            byOwners.computeIfAbsent(owners, x -> new ArrayList<>()).add(run);
        }
        r.array(byOwners.size());
        for (Map.Entry<List<Integer>, List<int[]>> shard : byOwners.entrySet()) {
            r.map(2);
            r.bulk("slots");
            r.array(shard.getValue().size() * 2);
            for (int[] run : shard.getValue()) {
                r.integer(run[0]);
                r.integer(run[1]);
            }
            r.bulk("nodes");
            r.array(shard.getKey().size());
            boolean first = true;
            for (int index : shard.getKey()) {
                Member m = members.get(index);
                r.map(7);
                r.bulk("id");
                r.bulk(redisId(m));
                r.bulk(tlsCluster ? "tls-port" : "port"); // as Redis names a --tls-cluster node's announced port
                r.integer(m.port());
                r.bulk("ip");
                r.bulk(m.host());
                r.bulk("endpoint");
                r.bulk(m.host());
                r.bulk("role");
                r.bulk(first ? "master" : "replica");
                r.bulk("replication-offset");
                r.integer(0);
                r.bulk("health");
                r.bulk("online");
                first = false;
            }
        }
        return null;
    }

    private static CompletableFuture<Void> nodes(Session s, RespCommand c, Reply r) {
        ClusterNode.Topology t = served(s);
        StringBuilder out = new StringBuilder();
        List<Member> members = t.table().members();
        List<int[]> runs = runs(t.table());
        int clusterPort = s.server.cluster().settings().membership().clusterPort();
        for (int i = 0; i < members.size(); i++) {
            Member m = members.get(i);
            out.append(redisId(m)).append(' ').append(m.endpoint()).append('@')
                    .append(t.isSelf(m) ? clusterPort : 0).append(' ')
                    .append(t.isSelf(m) ? "myself,master" : "master").append(" - 0 0 ").append(t.table().epoch())
                    .append(" connected");
            for (int[] run : runs) {
                if (run[2] == i) {
                    out.append(' ').append(run[0]);
                    if (run[1] != run[0]) {
                        out.append('-').append(run[1]);
                    }
                }
            }
            out.append('\n');
        }
        r.verbatim(out.toString());
        return null;
    }

    private static CompletableFuture<Void> myid(Session s, RespCommand c, Reply r) {
        r.bulk(redisId(node(s).topology().self()));
        return null;
    }

    private static CompletableFuture<Void> info(Session s, RespCommand c, Reply r) {
        r.verbatim(infoText(node(s)));
        return null;
    }

    /** CLUSTER INFO: Redis's fields, then kvtier's (members, replication and state transfer, lag and progress). */
    static String infoText(ClusterNode node) {
        ClusterNode.Topology t = node.topology();
        SlotTable table = t.table();
        int served = table.isOwned() && t.serving() ? SlotHash.SLOTS : 0;
        StringBuilder b = new StringBuilder();
        b.append("cluster_state:").append(served == SlotHash.SLOTS ? "ok" : "fail").append("\r\n");
        b.append("cluster_slots_assigned:").append(table.isOwned() ? SlotHash.SLOTS : 0).append("\r\n");
        b.append("cluster_slots_ok:").append(served).append("\r\n");
        b.append("cluster_slots_pfail:0\r\n");
        b.append("cluster_slots_fail:").append(SlotHash.SLOTS - served).append("\r\n");
        b.append("cluster_known_nodes:").append(table.members().size()).append("\r\n");
        b.append("cluster_size:").append(table.members().size()).append("\r\n");
        b.append("cluster_current_epoch:").append(table.epoch()).append("\r\n");
        b.append("cluster_my_epoch:").append(table.epoch()).append("\r\n");
        b.append("kvtier_node_id:").append(t.self().id()).append("\r\n");
        b.append("kvtier_members:").append(String.join(",", table.members().stream()
                .map(m -> m.id() + "@" + m.endpoint()).toList())).append("\r\n");
        b.append("kvtier_serving:").append(t.serving() ? 1 : 0).append("\r\n");
        if (!t.serving()) {
            b.append("kvtier_down_reason:").append(t.downReason()).append("\r\n");
        }
        b.append("kvtier_replicas:").append(table.replicas()).append("\r\n");
        b.append("kvtier_replication:").append(node.settings().syncReplication() ? "sync" : "async").append("\r\n");
        b.append("kvtier_slots_primary:").append(table.primaryCount(t.self())).append("\r\n");
        b.append("kvtier_slots_owned:").append(table.ownedCount(t.self())).append("\r\n");
        b.append("kvtier_slots_importing:").append(node.importingSlots()).append("\r\n");
        for (Member m : table.members()) {
            b.append("kvtier_member_").append(m.id()).append(":endpoint=").append(m.endpoint())
                    .append(",weight=").append(m.weight()).append(",primary_slots=").append(table.primaryCount(m))
                    .append(",owned_slots=").append(table.ownedCount(m)).append("\r\n");
        }
        // Kept for scripts that read it: the replication calls in flight (kvtier_replication_inflight_calls).
        b.append("kvtier_replication_pending:").append(node.replicationBacklog.calls()).append("\r\n");
        b.append("kvtier_replicated_total:").append(node.replicated.sum()).append("\r\n");
        b.append("kvtier_replication_failures_total:").append(node.replicationFailures.sum()).append("\r\n");
        b.append("kvtier_forwarded_total:").append(node.forwarded.sum()).append("\r\n");
        b.append("kvtier_forward_failures_total:").append(node.forwardFailures.sum()).append("\r\n");
        b.append("kvtier_moved_total:").append(node.movedReplies.sum()).append("\r\n");
        b.append("kvtier_refused_writes_total:").append(node.refusedWrites.sum()).append("\r\n");
        b.append("kvtier_late_peer_requests_total:").append(node.lateRequests.sum()).append("\r\n");
        b.append("kvtier_imported_keys_total:").append(node.fetchedKeys.sum()).append("\r\n");
        b.append("kvtier_imported_bytes_total:").append(node.fetchedBytes.sum()).append("\r\n");
        ClusterProgressInfo.append(b, node);
        return b.toString();
    }

    /** CLUSTER COUNTKEYSINSLOT: walks this node's keys on a walker thread (see {@link KeyspaceWalker}). */
    private static CompletableFuture<Void> countKeysInSlot(Session s, RespCommand c, Reply r) {
        int slot = slotArg(c.bytes(2));
        TieredStore store = s.server.store();
        CompletableFuture<Long> counted = KeyspaceWalker.walk(() -> {
            long[] n = {0};
            store.forEachKey(k -> {
                if (SlotHash.slot(k) == slot) {
                    n[0]++;
                }
            });
            return n[0];
        });
        return Async.then(counted, r, n -> {
            r.integer(n);
            return null;
        });
    }

    /** CLUSTER GETKEYSINSLOT: walks this node's keys on a walker thread (see {@link KeyspaceWalker}). */
    private static CompletableFuture<Void> getKeysInSlot(Session s, RespCommand c, Reply r) {
        int slot = slotArg(c.bytes(2));
        long count = Args.parseLong(c.bytes(3));
        if (count < 0) {
            throw new CommandException("ERR Invalid number of keys");
        }
        TieredStore store = s.server.store();
        CompletableFuture<List<byte[]>> found = KeyspaceWalker.walk(() -> {
            List<byte[]> keys = new ArrayList<>();
            store.forEachKey(k -> {
                if (SlotHash.slot(k) == slot && keys.size() < count) {
                    keys.add(k);
                }
            });
            return keys;
        });
        return Async.then(found, r, keys -> {
            r.array(keys.size());
            return KeyspaceWalker.writeKeys(r, keys);
        });
    }

    private static int slotArg(byte[] arg) {
        long slot;
        try {
            slot = Args.parseLong(arg);
        } catch (CommandException e) {
            throw new CommandException("ERR Invalid slot");
        }
        if (slot < 0 || slot >= SlotHash.SLOTS) {
            throw new CommandException("ERR Invalid slot");
        }
        return (int) slot;
    }
}
