package io.kvtier.cli.cluster;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The operator's membership commands, each a change agreed through the cluster's Raft log (ADR 0006): {@code leave}
 * and {@code drain} (a node that is up leaves for good; its slots go to the others, which copy them from it),
 * {@code forget} (a member that is down leaves; its slots go to the others, copied from their surviving copies),
 * {@code replace} (forget a dead member, once its replacement has joined) and {@code accept-loss} (serve the best
 * surviving copies of slots whose complete copies are gone). A restart is no membership change: a node that stops and
 * comes back keeps its slots and its data. Exit code 1 with one line on stderr when the change is refused or the
 * node cannot be asked.
 */
final class MembershipCommands {
    private MembershipCommands() {
    }

    /** The node a command is sent to, and how long to wait. */
    static final class Target {
        @Option(names = "--host", paramLabel = "HOST", defaultValue = "127.0.0.1",
                description = "Host of the node to ask (default: ${DEFAULT-VALUE}).")
        String host;

        @Option(names = {"-p", "--port"}, paramLabel = "PORT", defaultValue = "6379",
                description = "Its RESP port (default: ${DEFAULT-VALUE}).")
        int port;

        @Option(names = "--password", paramLabel = "PASS", description = "Sent with AUTH first (default: none).")
        String password;

        @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "10s",
                converter = ClusterStatusCommand.DurationConverter.class,
                description = "Limit on each call (default: ${DEFAULT-VALUE}).")
        Duration timeout;

        String address() {
            return host + ":" + port;
        }
    }

    /** Runs {@code body} with a query; an IOException is one line on stderr and exit code 1. */
    private static int run(Target t, IoBody body) {
        try (NodeQuery query = new NodeQuery(t.password, Duration.ofSeconds(5))) {
            body.run(query);
            return 0;
        } catch (IOException e) {
            System.err.println("kvtier: " + e.getMessage());
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            System.err.println("kvtier: interrupted");
            return 1;
        }
    }

    @FunctionalInterface
    private interface IoBody {
        void run(NodeQuery query) throws IOException, InterruptedException;
    }

    /**
     * Waits until the cluster, as the node at {@code host:port} sees it, has no member importing or waiting for a copy
     * (every slot complete on its owners), printing progress every few seconds; at most {@code limit}.
     */
    private static void awaitSettled(NodeQuery query, String host, int port, Duration limit, String what)
            throws IOException, InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        long lastPrint = 0;
        while (true) {
            ClusterInfo seen = ClusterInfo.parse(query.clusterInfo(host, port));
            List<NodeQuery.NodeReport> all = new ArrayList<>(query.others(seen));
            long importing = seen.slotsImporting();
            long waiting = Long.parseLong(seen.raw().getOrDefault("kvtier_slots_waiting_for_copy", "0"));
            for (NodeQuery.NodeReport r : all) {
                if (r.info() != null) {
                    importing += r.info().slotsImporting();
                    waiting += Long.parseLong(r.info().raw().getOrDefault("kvtier_slots_waiting_for_copy", "0"));
                }
            }
            if (importing == 0) {
                System.out.println(what + ": done, every slot is complete on its owners (epoch " + seen.epoch() + ")");
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IOException(what + ": still " + importing + " slot copies importing after "
                        + limit.toSeconds() + " s (" + waiting + " waiting for a copy no node within reach has); "
                        + "kvtier cluster status --all shows where");
            }
            if (System.nanoTime() - lastPrint > 5_000_000_000L) {
                System.out.println(what + ": " + importing + " slot copies still importing" + (waiting > 0 ? ", "
                        + waiting + " waiting for a copy no node within reach has" : "") + " ...");
                lastPrint = System.nanoTime();
            }
            Thread.sleep(500);
        }
    }

    /** {@code kvtier cluster leave}: the node asked leaves the cluster for good. */
    @Command(name = "leave", mixinStandardHelpOptions = true, sortOptions = false,
            description = {"Make the node at --host/--port leave the cluster for good (scale-in). Its slots go to the "
                    + "other members, which copy them from it while it still runs, and it leaves the Raft voters. "
                    + "With --wait (or 'drain') this waits until they have; then stop the node.",
                "A node that only restarts needs none of this: it keeps its slots and its data."})
    static final class Leave implements Callable<Integer> {
        @Mixin
        Target target;

        @Option(names = "--wait", description = "Wait until the other members hold every slot completely.")
        boolean wait;

        @Option(names = "--wait-limit", paramLabel = "DURATION", defaultValue = "1h",
                converter = ClusterStatusCommand.DurationConverter.class,
                description = "Give up waiting after this long (default: ${DEFAULT-VALUE}).")
        Duration waitLimit;

        @Override
        public Integer call() {
            return run(target, query -> {
                ClusterInfo before = ClusterInfo.parse(query.clusterInfo(target.host, target.port));
                query.command(target.host, target.port, target.timeout, "KVT.LEAVE");
                System.out.println(before.nodeId() + " (" + target.address() + ") left the cluster: its slots go to "
                        + "the other members, which copy them from it");
                if (wait) {
                    NodeQuery.NodeReport other = anyOther(query, before);
                    int colon = other.endpoint().lastIndexOf(':');
                    awaitSettled(query, other.endpoint().substring(0, colon),
                            Integer.parseInt(other.endpoint().substring(colon + 1)), waitLimit,
                            "drain of " + before.nodeId());
                    System.out.println(before.nodeId() + " holds nothing the others need any more: stop it now");
                }
            });
        }
    }

    /** {@code kvtier cluster drain}: leave, then wait until the others hold every slot. */
    @Command(name = "drain", mixinStandardHelpOptions = true, sortOptions = false,
            description = "The same as 'leave --wait': the node leaves the cluster for good, and this returns once "
                    + "the other members hold every slot completely; then stop the node.")
    static final class Drain implements Callable<Integer> {
        @Mixin
        Target target;

        @Option(names = "--wait-limit", paramLabel = "DURATION", defaultValue = "1h",
                converter = ClusterStatusCommand.DurationConverter.class,
                description = "Give up waiting after this long (default: ${DEFAULT-VALUE}).")
        Duration waitLimit;

        @Override
        public Integer call() {
            Leave leave = new Leave();
            leave.target = target;
            leave.wait = true;
            leave.waitLimit = waitLimit;
            return leave.call();
        }
    }

    /** {@code kvtier cluster forget ID}: a member that is down leaves for good. */
    @Command(name = "forget", mixinStandardHelpOptions = true, sortOptions = false,
            description = {"Take member NODE-ID, which is down (its process gone, its disk lost, or scaled in without "
                    + "a leave), out of the cluster for good: its slots go to the other members, which copy them from "
                    + "the surviving copies, and it leaves the Raft voters. Sent to the node at --host/--port.",
                "A member that is up must leave instead. Redis's CLUSTER FORGET does the same."})
    static final class Forget implements Callable<Integer> {
        @Mixin
        Target target;

        @Parameters(paramLabel = "NODE-ID", description = "kvtier's node id (--node-id), or the 40-hex id of "
                + "CLUSTER NODES.")
        String id;

        @Option(names = "--wait", description = "Wait until the other members hold every slot completely.")
        boolean wait;

        @Override
        public Integer call() {
            return run(target, query -> {
                query.command(target.host, target.port, target.timeout, "KVT.FORGET", id);
                System.out.println(id + " is out of the cluster: its slots go to the other members");
                if (wait) {
                    awaitSettled(query, target.host, target.port, Duration.ofHours(1), "forget of " + id);
                }
            });
        }
    }

    /** {@code kvtier cluster replace OLD}: forget a dead member once its replacement has joined. */
    @Command(name = "replace", mixinStandardHelpOptions = true, sortOptions = false,
            description = {"Replace member OLD-ID, which is down for good, by a node that has joined already: OLD-ID "
                    + "is forgotten and this waits until every slot is complete on its owners again.",
                "To replace a node under the same id (a new machine or an empty disk, as a StatefulSet does), just "
                        + "start it: it takes the old one's slots and copies them back."})
    static final class Replace implements Callable<Integer> {
        @Mixin
        Target target;

        @Parameters(paramLabel = "OLD-ID", description = "The member to replace (kvtier's node id).")
        String id;

        @Override
        public Integer call() {
            return run(target, query -> {
                ClusterInfo seen = ClusterInfo.parse(query.clusterInfo(target.host, target.port));
                String down = seen.raw().getOrDefault("kvtier_down_ids", "");
                if (!(("," + down).contains("," + id + "("))) {
                    throw new IOException(id + " is not down (down: " + (down.isEmpty() ? "none" : down) + "); only a "
                            + "member that is down can be replaced");
                }
                query.command(target.host, target.port, target.timeout, "KVT.FORGET", id);
                System.out.println(id + " is out of the cluster: its slots go to the other members");
                awaitSettled(query, target.host, target.port, Duration.ofHours(1), "replace of " + id);
            });
        }
    }

    /** {@code kvtier cluster accept-loss}: serve the best surviving copies of slots whose complete copies are gone. */
    @Command(name = "accept-loss", mixinStandardHelpOptions = true, sortOptions = false,
            description = {"Accept the loss of the complete copies of the slots that wait for one (a complete copy is "
                    + "one that holds every acknowledged write: after every owner of a slot stopped uncleanly, or its "
                    + "disks are gone, none may be left). Their owners then merge the best copies that survive (the "
                    + "newest version of each key wins) and serve them: what only the lost copies held is gone.",
                "Without --slots, the slots every member reports waiting; --yes is needed to go ahead."})
    static final class AcceptLoss implements Callable<Integer> {
        @Mixin
        Target target;

        @Option(names = "--slots", paramLabel = "RANGES", split = ",",
                description = "Slot ranges (first-last or one slot, comma-separated) instead of those reported "
                        + "waiting.")
        List<String> slots;

        @Option(names = "--yes", description = "Go ahead (without it, this only lists what it would accept).")
        boolean yes;

        @Override
        public Integer call() {
            return run(target, query -> {
                ClusterInfo seen = ClusterInfo.parse(query.clusterInfo(target.host, target.port));
                BitSet waiting = new BitSet();
                if (slots != null && !slots.isEmpty()) {
                    parse(String.join(",", slots), waiting);
                } else {
                    parse(seen.raw().getOrDefault("kvtier_slots_waiting", ""), waiting);
                    for (NodeQuery.NodeReport r : query.others(seen)) {
                        if (r.info() != null) {
                            parse(r.info().raw().getOrDefault("kvtier_slots_waiting", ""), waiting);
                        } else {
                            System.out.println("note: " + r.id() + " did not answer (" + r.error() + "); it may hold "
                                    + "copies, and the slots it waits for are not listed");
                        }
                    }
                }
                if (waiting.isEmpty()) {
                    System.out.println("no slot waits for a complete copy: nothing to accept");
                    return;
                }
                String ranges = ranges(waiting);
                if (!yes) {
                    System.out.println(waiting.cardinality() + " slots wait for a complete copy: " + ranges);
                    System.out.println("accepting their loss serves the best copies that survive; run again with "
                            + "--yes to do it");
                    return;
                }
                List<Object> args = new ArrayList<>(List.of("KVT.ACCEPTLOSS", Long.toString(seen.epoch())));
                args.addAll(List.of(ranges.split(",")));
                String accepted = query.command(target.host, target.port, target.timeout, args.toArray());
                if (accepted.equals("0")) {
                    throw new IOException("nothing was accepted: the slot table changed since (epoch " + seen.epoch()
                            + "), or those slots have a complete copy now; look again with kvtier cluster status");
                }
                System.out.println("accepted the loss of " + waiting.cardinality() + " slots (" + ranges + "): their "
                        + "owners now merge and serve the best copies that survive");
            });
        }

        private static void parse(String text, BitSet into) throws IOException {
            for (String part : text.split(",")) {
                String r = part.strip();
                if (r.isEmpty()) {
                    continue;
                }
                int dash = r.indexOf('-');
                try {
                    int first = Integer.parseInt(dash < 0 ? r : r.substring(0, dash));
                    int last = dash < 0 ? first : Integer.parseInt(r.substring(dash + 1));
                    if (first < 0 || last >= ClusterInfo.SLOTS || first > last) {
                        throw new NumberFormatException();
                    }
                    into.set(first, last + 1);
                } catch (NumberFormatException e) {
                    throw new IOException("slot range '" + r + "' is not first-last within 0-" + (ClusterInfo.SLOTS - 1));
                }
            }
        }

        private static String ranges(BitSet slots) {
            StringBuilder b = new StringBuilder();
            for (int s = slots.nextSetBit(0); s >= 0; ) {
                int end = slots.nextClearBit(s) - 1;
                b.append(b.length() > 0 ? "," : "").append(s).append(end > s ? "-" + end : "");
                s = slots.nextSetBit(end + 1);
            }
            return b.toString();
        }
    }

    /** A member other than the one {@code seen} describes, that answered. */
    private static NodeQuery.NodeReport anyOther(NodeQuery query, ClusterInfo seen) throws IOException {
        for (NodeQuery.NodeReport r : query.others(seen)) {
            if (r.info() != null) {
                return r;
            }
        }
        throw new IOException("no other member answered: cannot watch the drain from outside the leaving node");
    }
}
