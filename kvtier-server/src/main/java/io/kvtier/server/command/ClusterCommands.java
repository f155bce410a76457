package io.kvtier.server.command;

import static io.kvtier.server.command.CommandSpec.container;
import static io.kvtier.server.command.CommandSpec.of;

import io.kvtier.client.cluster.SlotHash;
import io.kvtier.cluster.Member;
import io.kvtier.cluster.SlotRange;
import io.kvtier.cluster.SlotTable;
import io.kvtier.cluster.node.ClusterNode;
import io.kvtier.resp.RespCommand;
import io.kvtier.server.reply.CommandException;
import io.kvtier.server.reply.Reply;
import io.kvtier.store.TieredStore;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/*
 * Redis Cluster's view of kvtier's placement. Redis pairs each primary with fixed replicas; kvtier places every slot's
 * owners independently (rendezvous hashing over contiguous slot ranges), so a node is primary for some slots and
 * backup for others, which Redis's model (a node is a master or a replica of one master) cannot say. So clients are
 * shown the primaries only, the same way in every reply (docs/adr/0004): CLUSTER SLOTS lists each range with its
 * primary and no replicas, CLUSTER SHARDS one shard per node holding its primary ranges, CLUSTER NODES every node as a
 * master with its primary ranges, merged. Backups are kvtier's business (failover, KVT.STATUS); a client that sends
 * READONLY may still read a backup's copy from the node holding it. Node ids are the SHA-1 of the kvtier node id in
 * hex (40 characters, as clients expect).
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
                        // Redis's CLUSTER FORGET: here through the log, for the whole cluster, and only for a member
                        // that is down (one that is up leaves: KVT.LEAVE).
                        of("cluster|forget", 3, "admin stale", 0, 0, 0, (s, c, r) -> forget(s, c.bytes(2), r)),
                        of("cluster|getkeysinslot", 4, "stale", 0, 0, 0, ClusterCommands::getKeysInSlot)),
                // kvtier's own view of the cluster, for `kvtier cluster status`: CLUSTER INFO's fields plus this
                // node's id, the members and their slot counts (values that hold host:port, which CLUSTER INFO's
                // name:value lines must not carry: clients split them on ':').
                of("kvt.status", 1, "loading stale", 0, 0, 0, (s, c, r) -> {
                    r.verbatim(statusText(node(s)));
                    return null;
                }),
                // Every slot range with all its owners, primary first then backups in failover order, in CLUSTER
                // SLOTS's format: where the copies are, for operators and tests (clients are shown primaries only).
                of("kvt.slots", 1, "loading stale", 0, 0, 0, ClusterCommands::ownerSlots),
                // Operators' membership commands (kvtier cluster leave|forget|accept-loss): through the log.
                of("kvt.leave", 1, "admin stale", 0, 0, 0, ClusterCommands::leave),
                of("kvt.forget", 2, "admin stale", 0, 0, 0, (s, c, r) -> forget(s, c.bytes(1), r)),
                of("kvt.acceptloss", -2, "admin stale", 0, 0, 0, ClusterCommands::acceptLoss),
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

    /**
     * The topology a cluster client is shown (CLUSTER SLOTS, SHARDS, NODES). A node that served once and serves no
     * more (no lease: cut off from the majority; or excluded) refuses, so that the client asks another node rather than
     * keep a map that may be stale (Redis shows its old one, and its clients then meet CLUSTERDOWN at every node of it).
     */
    private static ClusterNode.Topology served(Session s) {
        ClusterNode node = node(s);
        s.clusterAware = true;
        ClusterNode.Topology t = node.topology();
        if (!t.serving() && node.joined() && !node.closed()) {
            throw new io.kvtier.cluster.error.ClusterDownException(t.downReason() + "; ask another node for the "
                    + "cluster's map");
        }
        return t;
    }

    /** CLUSTER SLOTS: each primary range with its primary as [host, port, id], and no replicas (see above). */
    private static CompletableFuture<Void> slots(Session s, RespCommand c, Reply r) {
        writeRanges(served(s).table(), true, r);
        return null;
    }

    /**
     * {@code table}'s ranges in CLUSTER SLOTS's format, each with its owners as [host, port, id]: the primary only
     * ({@code primaries}), or every owner in failover order.
     */
    private static void writeRanges(SlotTable table, boolean primaries, Reply r) {
        Map<Member, String> ids = new HashMap<>(); // once per member, not per range
        List<SlotRange> ranges = primaries ? table.primaryRanges() : table.ranges();
        r.array(ranges.size());
        for (SlotRange range : ranges) {
            r.array(2 + range.owners().size());
            r.integer(range.start());
            r.integer(range.end());
            for (Member m : range.owners()) {
                r.array(3);
                r.bulk(m.host());
                r.integer(m.port());
                r.bulk(ids.computeIfAbsent(m, ClusterCommands::redisId));
            }
        }
    }

    /** KVT.SLOTS: as CLUSTER SLOTS, each range with every owner ([host, port, id]), primary first. */
    private static CompletableFuture<Void> ownerSlots(Session s, RespCommand c, Reply r) {
        writeRanges(node(s).topology().table(), false, r);
        return null;
    }

    /** CLUSTER SHARDS: one shard per member (a master with no replicas), holding its primary ranges. */
    private static CompletableFuture<Void> shards(Session s, RespCommand c, Reply r) {
        boolean tlsCluster = s.server.options().tls() != null && s.server.options().tls().cluster();
        ClusterNode.Topology t = served(s);
        List<Member> members = t.table().members();
        Map<Member, List<SlotRange>> byMember = byPrimary(t.table());
        r.array(members.size());
        for (Member m : members) {
            List<SlotRange> ranges = byMember.getOrDefault(m, List.of());
            r.map(2);
            r.bulk("slots");
            r.array(ranges.size() * 2);
            for (SlotRange range : ranges) {
                r.integer(range.start());
                r.integer(range.end());
            }
            r.bulk("nodes");
            r.array(1);
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
            r.bulk("master");
            r.bulk("replication-offset");
            r.integer(0);
            r.bulk("health");
            r.bulk(t.serving() || !t.isSelf(m) ? "online" : "loading");
        }
        return null;
    }

    /** CLUSTER NODES: every member a master with its merged primary ranges. */
    private static CompletableFuture<Void> nodes(Session s, RespCommand c, Reply r) {
        ClusterNode.Topology t = served(s);
        StringBuilder out = new StringBuilder();
        Map<Member, List<SlotRange>> byMember = byPrimary(t.table());
        io.kvtier.cluster.membership.Membership membership = s.server.cluster().membership();
        List<Member> members = new ArrayList<>(t.table().members());
        if (members.stream().noneMatch(t::isSelf) && t.self() != null) {
            // Excluded, or not yet included again: still "myself" (a master with no slots), as a Redis node always
            // lists itself; Lettuce fails with "Cannot determine own partition" without it.
            members.add(t.self());
        }
        for (Member m : members) {
            out.append(redisId(m)).append(' ').append(m.endpoint()).append('@')
                    .append(membership == null ? 0 : membership.clusterPort(m.id())).append(' ')
                    .append(t.isSelf(m) ? "myself,master" : "master").append(" - 0 0 ").append(t.table().epoch())
                    .append(" connected");
            for (SlotRange range : byMember.getOrDefault(m, List.of())) {
                out.append(' ').append(range.start());
                if (range.end() != range.start()) {
                    out.append('-').append(range.end());
                }
            }
            out.append('\n');
        }
        r.verbatim(out.toString());
        return null;
    }

    /** {@code table}'s primary ranges by primary, in slot order. */
    private static Map<Member, List<SlotRange>> byPrimary(SlotTable table) {
        Map<Member, List<SlotRange>> byMember = new HashMap<>();
        for (SlotRange range : table.primaryRanges()) {
            byMember.computeIfAbsent(range.primary(), x -> new ArrayList<>()).add(range);
        }
        return byMember;
    }

    private static CompletableFuture<Void> myid(Session s, RespCommand c, Reply r) {
        r.bulk(redisId(node(s).topology().self()));
        return null;
    }

    private static CompletableFuture<Void> info(Session s, RespCommand c, Reply r) {
        r.verbatim(infoText(node(s)));
        return null;
    }

    /**
     * CLUSTER INFO: Redis's fields, then kvtier's numbers (replication and state transfer, lag and progress). Every
     * line is {@code name:value} with no ':' in the value, as clients parse it (redis-py splits each line on ':');
     * what names hosts and ports is in {@link #statusText}.
     */
    static String infoText(ClusterNode node) {
        ClusterNode.Topology t = node.topology();
        SlotTable table = t.table();
        int served = t.serving() ? table.servedSlots() : 0;
        StringBuilder b = new StringBuilder();
        b.append("cluster_state:").append(served == SlotHash.SLOTS ? "ok" : "fail").append("\r\n");
        b.append("cluster_slots_assigned:").append(table.isOwned() ? SlotHash.SLOTS : 0).append("\r\n");
        b.append("cluster_slots_ok:").append(served).append("\r\n");
        b.append("cluster_slots_pfail:0\r\n");
        b.append("cluster_slots_fail:").append(SlotHash.SLOTS - served).append("\r\n");
        b.append("cluster_known_nodes:").append(table.members().size()).append("\r\n");
        b.append("cluster_size:").append(table.members().stream().filter(m -> table.primaryCount(m) > 0).count())
                .append("\r\n");
        b.append("cluster_current_epoch:").append(table.epoch()).append("\r\n");
        b.append("cluster_my_epoch:").append(table.epoch()).append("\r\n");
        b.append("kvtier_serving:").append(t.serving() ? 1 : 0).append("\r\n");
        var config = node.config();
        b.append("kvtier_lease_valid:").append(config != null && config.leaseValid() ? 1 : 0).append("\r\n");
        b.append("kvtier_raft_leader:").append(config != null && config.isLeader() ? 1 : 0).append("\r\n");
        b.append("kvtier_raft_voters:").append(config == null ? 0 : config.voters().size()).append("\r\n");
        if (config != null) {
            ClusterNode.Quorum q = node.quorum();
            b.append("kvtier_raft_voters_alive:").append(q.voters().size() - q.unreachable().size()).append("\r\n");
            // How many more voters may fail before nothing commits: no table, no lease, no service.
            b.append("kvtier_voter_failures_tolerated:").append(q.failuresTolerated()).append("\r\n");
        }
        b.append("kvtier_members_down:").append(config == null ? 0 : config.current().down().size()).append("\r\n");
        b.append("kvtier_slots_unserved:").append(table.isOwned() ? SlotHash.SLOTS - table.servedSlots() : 0)
                .append("\r\n");
        b.append("kvtier_raft_candidates:").append(config == null ? 0 : config.current().candidates().size())
                .append("\r\n");
        b.append("kvtier_replicas:").append(table.replicas()).append("\r\n");
        b.append("kvtier_replication:").append(node.settings().syncReplication() ? "sync" : "async").append("\r\n");
        b.append("kvtier_slots_primary:").append(table.primaryCount(t.self())).append("\r\n");
        b.append("kvtier_slots_owned:").append(table.ownedCount(t.self())).append("\r\n");
        b.append("kvtier_slots_importing:").append(node.importingSlots()).append("\r\n");
        b.append("kvtier_slots_fenced:").append(node.fencedSlots()).append("\r\n");
        b.append("kvtier_slots_waiting_for_copy:").append(node.waitingSlots().cardinality()).append("\r\n");
        b.append("kvtier_started_clean:").append(node.startedClean() ? 1 : 0).append("\r\n");
        // A member back or new will get the lead of its slots (a REBALANCE, a handoff): the table is not final yet.
        b.append("kvtier_rebalance_pending:").append(node.rebalancePending() ? 1 : 0).append("\r\n");
        // Kept for scripts that read it: the replication calls in flight (kvtier_replication_inflight_calls).
        b.append("kvtier_replication_pending:").append(node.replicationBacklog.calls()).append("\r\n");
        b.append("kvtier_replicated_total:").append(node.counters.replicated().sum()).append("\r\n");
        b.append("kvtier_replication_failures_total:").append(node.counters.replicationFailures().sum()).append("\r\n");
        b.append("kvtier_forwarded_total:").append(node.counters.forwarded().sum()).append("\r\n");
        b.append("kvtier_forward_failures_total:").append(node.counters.forwardFailures().sum()).append("\r\n");
        b.append("kvtier_moved_total:").append(node.counters.movedReplies().sum()).append("\r\n");
        b.append("kvtier_refused_writes_total:").append(node.counters.refusedWrites().sum()).append("\r\n");
        b.append("kvtier_late_peer_requests_total:").append(node.counters.lateRequests().sum()).append("\r\n");
        b.append("kvtier_imported_keys_total:").append(node.counters.fetchedKeys().sum()).append("\r\n");
        b.append("kvtier_imported_bytes_total:").append(node.counters.fetchedBytes().sum()).append("\r\n");
        ClusterProgressInfo.append(b, node);
        return b.toString();
    }

    /**
     * KVT.STATUS: CLUSTER INFO's lines, then this node's id, why it is not serving (if so) and every member's endpoint,
     * weight and slot counts. Read by {@code kvtier cluster status}; values may hold ':' (host:port, node ids).
     */
    static String statusText(ClusterNode node) {
        ClusterNode.Topology t = node.topology();
        SlotTable table = t.table();
        StringBuilder b = new StringBuilder(infoText(node));
        b.append("kvtier_node_id:").append(t.self().id()).append("\r\n");
        b.append("kvtier_members:").append(String.join(",", table.members().stream()
                .map(m -> m.id() + "@" + m.endpoint()).toList())).append("\r\n");
        if (!t.serving()) {
            b.append("kvtier_down_reason:").append(t.downReason()).append("\r\n");
        }
        var config = node.config();
        if (config != null) {
            b.append("kvtier_raft_leader_id:").append(String.valueOf(config.leader())).append("\r\n");
            b.append("kvtier_raft_voter_ids:").append(String.join(",", config.voters())).append("\r\n");
            b.append("kvtier_raft_voters_unreachable:").append(String.join(",", node.quorum().unreachable()))
                    .append("\r\n");
            b.append("kvtier_down_ids:").append(String.join(",", config.current().down().values().stream()
                    .map(d -> d.member().id() + (d.stopped() ? "(stopped)" : "(failed)")).toList())).append("\r\n");
            b.append("kvtier_slots_waiting:").append(ranges(node.waitingSlots())).append("\r\n");
        }
        for (Member m : table.members()) {
            b.append("kvtier_member_").append(m.id()).append(":endpoint=").append(m.endpoint())
                    .append(",weight=").append(m.weight()).append(",primary_slots=").append(table.primaryCount(m))
                    .append(",owned_slots=").append(table.ownedCount(m)).append("\r\n");
        }
        return b.toString();
    }

    /** KVT.LEAVE: this node leaves the cluster for good; its slots go to the others, which copy them from it. */
    private static CompletableFuture<Void> leave(Session s, RespCommand c, Reply r) {
        ClusterNode node = node(s);
        return Async.then(node.leaveCluster().exceptionally(e -> false), r, left -> {
            if (!left) {
                throw new CommandException("ERR this node could not leave: it is not a member now, or the cluster has "
                        + "no leader (retry once it has one)");
            }
            r.ok();
            return null;
        });
    }

    /**
     * CLUSTER FORGET id / KVT.FORGET id: takes a member that is down out of the cluster, through the log; {@code id}
     * is kvtier's node id or the 40-hex id CLUSTER NODES shows. Its slots are placed among the others.
     */
    private static CompletableFuture<Void> forget(Session s, byte[] idArg, Reply r) {
        ClusterNode node = node(s);
        String given = new String(idArg, StandardCharsets.UTF_8);
        var config = node.config().current();
        String id = null;
        for (var d : config.down().values()) {
            if (d.member().id().equals(given) || redisId(d.member()).equalsIgnoreCase(given)) {
                id = d.member().id();
            }
        }
        if (id == null) {
            boolean up = config.members().values().stream().anyMatch(a -> a.member().id().equals(given)
                    || redisId(a.member()).equalsIgnoreCase(given));
            throw new CommandException(up ? "ERR node " + given + " is up: a node that is up leaves (kvtier cluster "
                    + "leave, or KVT.LEAVE on it); forget is for a node that is down" : "ERR Unknown node " + given);
        }
        String member = id;
        return Async.then(node.forget(member).exceptionally(e -> false), r, done -> {
            if (!done) {
                throw new CommandException("ERR could not forget " + member + ": it came back meanwhile, or the "
                        + "cluster has no leader (retry once it has one)");
            }
            r.ok();
            return null;
        });
    }

    /**
     * KVT.ACCEPTLOSS epoch range...: accepts the loss of those slots' complete copies, as decided at table
     * {@code epoch} (a range is "first-last" or one slot): their owners serve the best copies that survive. Only slots
     * that no member is complete for are touched; nothing if the table changed since.
     */
    private static CompletableFuture<Void> acceptLoss(Session s, RespCommand c, Reply r) {
        ClusterNode node = node(s);
        long epoch = Args.parseLong(c.bytes(1));
        java.util.BitSet slots = new java.util.BitSet(SlotHash.SLOTS);
        for (int i = 2; i < c.argCount(); i++) {
            String range = new String(c.bytes(i), StandardCharsets.UTF_8);
            int dash = range.indexOf('-');
            try {
                int first = Integer.parseInt(dash < 0 ? range : range.substring(0, dash));
                int last = dash < 0 ? first : Integer.parseInt(range.substring(dash + 1));
                if (first < 0 || last >= SlotHash.SLOTS || first > last) {
                    throw new NumberFormatException();
                }
                slots.set(first, last + 1);
            } catch (NumberFormatException e) {
                throw new CommandException("ERR slot range '" + range + "' is not 'first-last' within 0-"
                        + (SlotHash.SLOTS - 1));
            }
        }
        return Async.then(node.acceptLoss(epoch, slots).exceptionally(e -> false), r, accepted -> {
            r.integer(accepted ? 1 : 0);
            return null;
        });
    }

    /** {@code slots} as "first-last" ranges separated by commas. */
    static String ranges(java.util.BitSet slots) {
        StringBuilder b = new StringBuilder();
        for (int s = slots.nextSetBit(0); s >= 0; ) {
            int end = slots.nextClearBit(s) - 1;
            b.append(b.length() > 0 ? "," : "").append(s).append(end > s ? "-" + end : "");
            s = slots.nextSetBit(end + 1);
        }
        return b.toString();
    }

    /** CLUSTER COUNTKEYSINSLOT: walks this node's keys on a walker thread (see {@link KeyspaceWalker}). */
    private static CompletableFuture<Void> countKeysInSlot(Session s, RespCommand c, Reply r) {
        int slot = slotArg(c.bytes(2));
        return KeyspaceWalker.countKeys(s.server.store(), k -> SlotHash.slot(k) == slot, r);
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
