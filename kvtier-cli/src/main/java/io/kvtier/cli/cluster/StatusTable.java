package io.kvtier.cli.cluster;

import io.kvtier.common.Columns;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code kvtier cluster status} for people: a summary of one node's KVT.STATUS (state, epoch, replication and its
 * lag, rebalancing progress), the members with their share of the slots, the node's traffic counters and, with
 * {@code --all}, one line per member as that member reports itself. A pure function of its arguments.
 */
final class StatusTable {
    private StatusTable() {
    }

    /** The status of the cluster as the node at {@code target} (host:port) reports it. */
    static String format(ClusterInfo info, String target) {
        return format(info, target, List.of());
    }

    /** The same, then a line per other member from {@code others} (their own reports, {@code --all}). */
    static String format(ClusterInfo info, String target, List<NodeQuery.NodeReport> others) {
        StringBuilder b = new StringBuilder();
        b.append("kvtier cluster, as node ").append(info.nodeId()).append(" (").append(target).append(") sees it\n");
        line(b, "state", info.state() + ", " + (info.serving() ? "serving"
                : "NOT serving: " + (info.downReason() == null ? "no reason given" : info.downReason())));
        line(b, "epoch", Long.toString(info.epoch()));
        line(b, "members", info.members().size() + ", " + info.primarySlotsAssigned() + " of " + ClusterInfo.SLOTS
                + " slots have a primary");
        line(b, "quorum", quorum(info));
        String down = info.raw().getOrDefault("kvtier_down_ids", "");
        if (!down.isEmpty()) {
            line(b, "down", down.replace(",", ", ") + " (their slots are led by their other owners; a member gone "
                    + "for good: kvtier cluster forget)");
        }
        String waiting = info.raw().getOrDefault("kvtier_slots_waiting", "");
        if (!waiting.isEmpty()) {
            line(b, "WAITING", "slots " + waiting + " have no complete copy within reach: they serve once a node "
                    + "holding one is back, or after kvtier cluster accept-loss");
        }
        line(b, "this node", info.slotsPrimary() + " slots primary, " + info.slotsOwned() + " owned, "
                + info.slotsImporting() + " importing");
        line(b, "replication", info.replication() + ", " + info.replicas() + (info.replicas() == 1 ? " backup"
                : " backups") + " per slot");
        line(b, "lag", lag(info.lag()));
        line(b, "rebalancing", rebalance(info.rebalance()));
        ClusterInfo.Rebalance r = info.rebalance();
        if (r.startedAtMillis() > 0) {
            line(b, "", "started " + Instant.ofEpochMilli(r.startedAtMillis()).truncatedTo(ChronoUnit.SECONDS)
                    + ", limit " + bytes(r.rate()) + "/s");
        }
        ClusterInfo.Traffic t = info.traffic();
        line(b, "traffic", String.format(Locale.ROOT, "since start: %,d replicated (%,d failed), %,d forwarded "
                        + "(%,d failed), %,d moved,", t.replicated(), t.replicationFailures(), t.forwarded(),
                t.forwardFailures(), t.moved()));
        line(b, "", String.format(Locale.ROOT, "%,d writes refused, %,d keys (%s) imported", t.refusedWrites(),
                t.importedKeys(), bytes(t.importedBytes())));
        b.append('\n');
        members(b, info);
        if (!others.isEmpty()) {
            b.append('\n');
            nodes(b, info, others);
        }
        return b.toString();
    }

    /**
     * The Raft voters and how many more of them may fail before nothing commits (no table change, no lease: no
     * service), with those this node cannot reach named.
     */
    static String quorum(ClusterInfo info) {
        Map<String, String> raw = info.raw();
        if (!raw.containsKey("kvtier_voter_failures_tolerated")) {
            return "unknown (an older node)";
        }
        String voters = raw.getOrDefault("kvtier_raft_voter_ids", "");
        String unreachable = raw.getOrDefault("kvtier_raft_voters_unreachable", "");
        long tolerated = Long.parseLong(raw.get("kvtier_voter_failures_tolerated"));
        return raw.getOrDefault("kvtier_raft_voters_alive", "?") + " of " + raw.getOrDefault("kvtier_raft_voters", "?")
                + " voters reachable (" + voters.replace(",", ", ") + ")" + (unreachable.isEmpty() ? ""
                : ", unreachable: " + unreachable.replace(",", ", ")) + "; "
                + (tolerated == 0 ? "ONE MORE VOTER FAILURE STOPS THE CLUSTER" : tolerated + " more voter failure"
                + (tolerated == 1 ? "" : "s") + " tolerated");
    }

    private static void line(StringBuilder b, String label, String value) {
        b.append(String.format(Locale.ROOT, "  %-12s %s%n", label, value));
    }

    static String lag(ClusterInfo.Lag lag) {
        return String.format(Locale.ROOT, "%,d writes not yet on every backup (%,d calls, %s in flight), oldest %s",
                lag.writes(), lag.calls(), bytes(lag.bytes()), millis(lag.oldestMillis()));
    }

    /** One line on the node's import: where it stands, slots, sources, what it copied and how fast. */
    static String rebalance(ClusterInfo.Rebalance r) {
        String copied = String.format(Locale.ROOT, "%,d keys (%s) in %s, %s/s", r.keys(), bytes(r.bytes()),
                millis(r.elapsedMillis()), bytes(r.elapsedMillis() == 0 ? 0 : r.bytes() * 1000 / r.elapsedMillis()));
        String sources = r.sources() + (r.sources() == 1 ? " source" : " sources");
        return switch (r.state()) {
            case "idle" -> "idle: nothing imported since the node started (limit " + bytes(r.rate()) + "/s)";
            case "waiting" -> "waiting at epoch " + r.epoch() + " for the members to say who holds each of "
                    + r.slots() + " slots";
            case "copying" -> String.format(Locale.ROOT, "copying at epoch %d, pass %d of 2: %d of %d slots copied, "
                    + "%d done, from %s; %s", r.epoch(), r.pass(), r.slotsCopied(), r.slots(), r.slotsDone(), sources,
                    copied);
            case "done" -> String.format(Locale.ROOT, "done at epoch %d: %d slots from %s; %s", r.epoch(), r.slots(),
                    sources, copied);
            case "superseded" -> String.format(Locale.ROOT, "superseded at epoch %d by a newer table after %d of %d "
                    + "slots; %s", r.epoch(), r.slotsDone(), r.slots(), copied);
            default -> "not reported by this node";
        };
    }

    /** One line per member as it reports itself: epoch, serving, importing slots, lag and rebalancing. */
    private static void nodes(StringBuilder b, ClusterInfo info, List<NodeQuery.NodeReport> others) {
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"NODE", "EPOCH", "SERVING", "IMPORTING", "LAG", "REBALANCING"});
        rows.add(nodeRow(info.nodeId() + " *", info));
        for (NodeQuery.NodeReport r : others) {
            rows.add(r.info() == null ? new String[] {r.id(), "-", "unreachable", "", "", r.error()}
                    : nodeRow(r.id(), r.info()));
        }
        Columns.append(b, rows, new boolean[] {false, true, false, true, false, false});
    }

    private static String[] nodeRow(String id, ClusterInfo i) {
        ClusterInfo.Lag lag = i.lag();
        return new String[] {id, Long.toString(i.epoch()), i.serving() ? "yes" : "no",
                Integer.toString(i.slotsImporting()), String.format(Locale.ROOT, "%,d writes, %s", lag.writes(),
                millis(lag.oldestMillis())), rebalance(i.rebalance())};
    }

    /** The member table: endpoint, weight, primary and owned slots with their share. */
    private static void members(StringBuilder b, ClusterInfo info) {
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"MEMBER", "ENDPOINT", "WEIGHT", "PRIMARY", "", "OWNED", ""});
        int primaries = Math.max(1, info.primarySlotsAssigned());
        int owned = Math.max(1, info.ownedSlotsAssigned());
        for (ClusterInfo.MemberRow m : info.members()) {
            rows.add(new String[] {m.id() + (m.id().equals(info.nodeId()) ? " *" : ""), m.endpoint(),
                    Long.toString(m.weight()), Integer.toString(m.primarySlots()), percent(m.primarySlots(), primaries),
                    Integer.toString(m.ownedSlots()), percent(m.ownedSlots(), owned)});
        }
        rows.add(new String[] {"total", "", "", Integer.toString(info.primarySlotsAssigned()),
                percent(info.primarySlotsAssigned(), primaries), Integer.toString(info.ownedSlotsAssigned()),
                percent(info.ownedSlotsAssigned(), owned)});
        Columns.append(b, rows, new boolean[] {false, false, true, true, true, true, true});
    }

    private static String percent(int part, int whole) {
        return String.format(Locale.ROOT, "%.1f%%", 100.0 * part / whole);
    }

    /** Bytes in binary units with one decimal: {@code 512 B}, {@code 1.5 KiB}, {@code 12.0 MiB}. */
    static String bytes(long n) {
        if (n < 1024) {
            return n + " B";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB", "PiB"};
        double v = n;
        int u = -1;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }

    /** A duration for people: {@code 0 ms}, {@code 850 ms}, {@code 3.2 s}, {@code 4 min 10 s}. */
    static String millis(long ms) {
        if (ms < 1000) {
            return ms + " ms";
        }
        if (ms < 60_000) {
            return String.format(Locale.ROOT, "%.1f s", ms / 1000.0);
        }
        return (ms / 60_000) + " min " + (ms % 60_000) / 1000 + " s";
    }
}
