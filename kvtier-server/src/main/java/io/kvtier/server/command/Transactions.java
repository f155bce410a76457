package io.kvtier.server.command;

import static io.kvtier.server.command.CommandSpec.of;

import io.kvtier.client.cluster.SlotHash;
import io.kvtier.cluster.Member;
import io.kvtier.cluster.error.ClusterException;
import io.kvtier.cluster.node.ClusterNode;
import io.kvtier.resp.RespCommand;
import io.kvtier.server.reply.CommandException;
import io.kvtier.server.reply.Reply;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * MULTI, EXEC, DISCARD, WATCH and UNWATCH, with Redis's semantics: commands after MULTI are checked and answered
 * {@code +QUEUED}; one that cannot be queued (unknown, wrong arity, not authenticated, in a cluster a key of another
 * node) makes EXEC answer EXECABORT; EXEC answers nil if a watched key changed since WATCH, else runs the queue and
 * answers every command's reply in one array (a command failing at run time answers its error in place; the others
 * still run). The queue runs holding its keys exclusively in the {@link KeyGate}: no other client's command on those
 * keys runs between its commands. In a cluster every key of a transaction must hash to one slot, this node's, and the
 * transaction runs as one write there: under the keys' locks, replicated once at the end, answered after the backups
 * have it.
 */
final class Transactions {
    /** The name a proxy forwards a whole transaction under, inside KVT.FWD: {@code KVT.EXEC n (argc args...)...}. */
    static final String FORWARDED = "kvt.exec";
    /** Commands that run at once inside MULTI instead of being queued, as in Redis. */
    private static final Set<String> NOT_QUEUED = Set.of("exec", "discard", "multi", "watch", "quit", "reset");
    /** Queued commands run in slices of this many before the event loop serves other connections (keys stay held). */
    private static final int SLICE = 256;

    private Transactions() {
    }

    static List<CommandSpec> specs() {
        return List.of(
                of("multi", 1, "noscript loading stale fast allow_busy", 0, 0, 0, Transactions::multi),
                of("exec", 1, "noscript loading stale skip_slowlog", 0, 0, 0, Transactions::exec),
                of("discard", 1, "noscript loading stale fast allow_busy", 0, 0, 0, (s, c, r) -> {
                    if (s.transaction == null) {
                        throw new CommandException("ERR DISCARD without MULTI");
                    }
                    s.discardTransaction();
                    r.ok();
                    return null;
                }),
                of("watch", -2, "noscript loading stale fast allow_busy", 1, -1, 1, Transactions::watch),
                of("unwatch", 1, "noscript loading stale fast allow_busy", 0, 0, 0, (s, c, r) -> {
                    s.unwatch();
                    r.ok();
                    return null;
                }));
    }

    static boolean runsWhileQueuing(CommandSpec spec) {
        return NOT_QUEUED.contains(spec.name());
    }

    private static CompletableFuture<Void> multi(Session s, RespCommand c, Reply r) {
        if (s.transaction != null) {
            throw new CommandException("ERR MULTI calls can not be nested"); // the transaction goes on, as in Redis
        }
        s.transaction = new Transaction();
        r.ok();
        return null;
    }

    private static CompletableFuture<Void> watch(Session s, RespCommand c, Reply r) {
        if (s.transaction != null) {
            throw new CommandException("ERR WATCH inside MULTI is not allowed");
        }
        byte[][] keys = new byte[c.argCount() - 1][];
        for (int i = 1; i < c.argCount(); i++) {
            keys[i - 1] = c.bytes(i);
        }
        ClusterNode node = s.server.cluster();
        if (node != null) {
            for (byte[] key : keys) {
                checkHere(node, s, key);
            }
        }
        return watchFrom(s, keys, 0, r);
    }

    /**
     * Keys one WATCH adds before the event loop serves the other connections; the rest follow after a round of their
     * I/O. 19 connections each watching 100,000 keys in commands of 10,000 (about 10 ms each) held honest PINGs up to
     * 460-540 ms (issue 29).
     */
    static final int WATCH_SLICE = 1_024;

    /**
     * Watches {@code keys} from {@code from} on, a slice at a time. A key of a later slice that changes before its
     * slice is watched changed before the WATCH that names it returned, as if the client had sent it a moment later.
     * A slice refused (the key limit, the client memory budget) leaves the slices before it watched, as UNWATCH,
     * EXEC or DISCARD would forget them.
     */
    private static CompletableFuture<Void> watchFrom(Session s, byte[][] keys, int from, Reply r) {
        int to = Math.min(keys.length, from + WATCH_SLICE);
        byte[][] slice = from == 0 && to == keys.length ? keys : java.util.Arrays.copyOfRange(keys, from, to);
        long earliestExpiry = Long.MAX_VALUE;
        for (byte[] key : slice) {
            // A key whose TTL has already passed is deleted now, before the watch starts: its deletion is not a
            // change after WATCH (Redis 7.0: "WATCH stale keys should not fail EXEC"). One that expires later is.
            long at = s.server.store().expireAt(key);
            if (at > 0) {
                earliestExpiry = Math.min(earliestExpiry, at);
            }
        }
        try {
            s.watch = s.server.watches().watch(s.watch, slice, earliestExpiry, s::chargeHeap);
        } catch (CommandException e) {
            if (e.getMessage().equals(Watches.CLIENT_MEMORY)) {
                s.closeAfterReply = true; // as a request over the budget: the connection holding the most goes
            }
            throw e;
        }
        if (to == keys.length) {
            r.ok();
            return null;
        }
        CompletableFuture<Void> later = new CompletableFuture<>();
        // Scheduled, not executed: Netty would run a resubmitted task before the next round of I/O.
        r.executor().schedule(() -> later.complete(null), 1, java.util.concurrent.TimeUnit.MICROSECONDS);
        // A connection closed meanwhile forgot its watch (ConnectionHandler#channelInactive): nothing more is added.
        return Async.then(later, r, v -> s.channel.isActive() ? watchFrom(s, keys, to, r) : null);
    }

    /**
     * Queues {@code cmd} (checked by the dispatcher) and answers QUEUED; in a cluster, a key this node is not the
     * primary of is refused here (and fails the transaction), as Redis Cluster does.
     */
    static void queue(Session s, CommandSpec spec, RespCommand cmd, Reply r) {
        if (spec.name().startsWith("kvt.")) { // the cluster's own: they take the key gate themselves
            s.transaction.fail();
            r.error("ERR Command not allowed inside a transaction");
            return;
        }
        ClusterNode node = s.server.cluster();
        if (node != null && ClusterRouter.routed(spec)) {
            try {
                for (int k : ClusterRouter.keyIndexes(spec, cmd)) {
                    if (proxied(node, s)) {
                        primaryOf(node, cmd.bytes(k)); // served somewhere; EXEC forwards the whole transaction there
                    } else {
                        checkHere(node, s, cmd.bytes(k));
                    }
                }
            } catch (CommandException | ClusterException e) {
                s.transaction.fail();
                r.error(Dispatcher.errorText(e));
                return;
            }
        }
        s.transaction.add(spec, cmd.take(ClusterRouter.allIndexes(cmd))); // the caller releases cmd; this copy lives
        r.simple("QUEUED");
    }

    /** Whether this client's transactions on other nodes' slots are forwarded (--proxy, a cluster-unaware client). */
    private static boolean proxied(ClusterNode node, Session s) {
        return node.settings().proxy() && !s.clusterAware;
    }

    /** The primary of {@code key}'s slot; CLUSTERDOWN when there is none. */
    private static Member primaryOf(ClusterNode node, byte[] key) {
        ClusterNode.Topology t = node.topology();
        ClusterRouter.requireServing(t);
        return ClusterRouter.primaryOf(t, SlotHash.slot(key));
    }

    /**
     * Refuses a key whose slot this node is not the primary of: MOVED, or CLUSTERDOWN. WATCH cannot be forwarded (it
     * watches for this connection), so even a proxied client gets MOVED for a key of another node.
     */
    private static void checkHere(ClusterNode node, Session s, byte[] key) {
        Member primary = primaryOf(node, key);
        if (!node.topology().isSelf(primary)) {
            throw ClusterRouter.moved(node, SlotHash.slot(key), primary);
        }
    }

    private static CompletableFuture<Void> exec(Session s, RespCommand c, Reply r) {
        Transaction t = s.transaction;
        if (t == null) {
            throw new CommandException("ERR EXEC without MULTI");
        }
        s.transaction = null;
        if (t.failed()) {
            t.release();
            s.unwatch();
            throw new CommandException("EXECABORT Transaction discarded because of previous errors.");
        }
        byte[][] keys;
        ClusterNode node = s.server.cluster();
        try {
            keys = t.keys();
            if (node != null && keys.length > 0) {
                int slot = ClusterRouter.oneSlot(keys);
                ClusterNode.Topology topology = node.topology();
                ClusterRouter.requireServing(topology);
                Member primary = ClusterRouter.primaryOf(topology, slot);
                if (!topology.isSelf(primary)) {
                    if (!proxied(node, s)) {
                        throw ClusterRouter.moved(node, slot, primary);
                    }
                    return forward(node, s, t, primary, keys[0], r);
                }
                ClusterRouter.checkNotBehind(node, t.writes());
                ClusterRouter.checkServable(node, keys);
            }
        } catch (RuntimeException e) {
            t.release();
            s.unwatch();
            throw e;
        }
        return runGated(node, s, t, r, keys);
    }

    /**
     * A proxied client's transaction whose slot another node is the primary of: sent there whole, run there as one
     * transaction, its reply relayed. The WATCH check (of keys this node serves) is made here first.
     */
    private static CompletableFuture<Void> forward(ClusterNode node, Session s, Transaction t, Member primary,
                                                   byte[] firstKey, Reply r) {
        boolean broken = s.watch != null && s.watch.broken();
        s.unwatch();
        if (broken) {
            t.release();
            r.nullArray();
            return null;
        }
        List<Object> args = new java.util.ArrayList<>();
        args.add("KVT.FWD");
        args.add(null); // the epoch stamp, set per attempt
        args.add("KVT.EXEC");
        args.add(Integer.toString(t.size()));
        try {
            for (int i = 0; i < t.size(); i++) {
                RespCommand c = t.command(i);
                args.add(Integer.toString(c.argCount()));
                for (int a = 0; a < c.argCount(); a++) {
                    args.add(c.isSink(a) ? io.kvtier.server.value.Values.toByteBuf(c, a) : c.bytes(a));
                }
            }
        } catch (RuntimeException e) { // a payload that cannot be forwarded (on disk): nothing was sent
            for (Object a : args) {
                if (a instanceof io.netty.buffer.ByteBuf b) {
                    b.release();
                }
            }
            throw e;
        } finally {
            t.release();
        }
        return ClusterRouter.relayed(ClusterRouter.send(node, node.topology(), primary, args.toArray(), firstKey,
                s.commandStartNanos),
                primary, r);
    }

    /**
     * KVT.FWD ... KVT.EXEC n (argc args...)...: a transaction a proxy forwarded, run here as its slot's primary (not
     * here: TRYAGAIN, and the proxy retries where the slot went). {@code cmd} stays the caller's to release.
     */
    static CompletableFuture<Void> execForwarded(ClusterNode node, Session s, RespCommand cmd, Reply r) {
        Transaction t = new Transaction();
        byte[][] keys;
        try {
            int n = Args.parseInt(cmd.bytes(1));
            int at = 2;
            for (int i = 0; i < n; i++) {
                int argc = Args.parseInt(cmd.bytes(at++));
                if (argc < 1 || at + argc > cmd.argCount()) {
                    throw new CommandException("ERR malformed forwarded transaction");
                }
                int[] indexes = new int[argc];
                for (int a = 0; a < argc; a++) {
                    indexes[a] = at++;
                }
                RespCommand part = cmd.take(indexes);
                CommandSpec spec = checked(s, part);
                t.add(spec, part);
                if (spec == null) {
                    throw new CommandException("ERR forwarded transaction holds an unknown command or wrong arity");
                }
            }
            keys = t.keys();
            for (byte[] key : keys) {
                PeerCommands.checkPrimary(node.topology(), key);
            }
            ClusterRouter.checkNotBehind(node, t.writes());
        } catch (RuntimeException e) {
            t.release();
            throw e;
        }
        return runGated(node, s, t, r, keys);
    }

    /** {@code cmd}'s spec, its subcommand resolved, if it names one with a fitting arity; else null. */
    private static CommandSpec checked(Session s, RespCommand cmd) {
        CommandSpec spec = s.server.commands().lookup(cmd.bytes(0));
        if (spec != null && !spec.subcommands().isEmpty()) {
            spec = cmd.argCount() < 2 ? null : spec.subcommands().get(Args.lower(cmd.bytes(1)));
        }
        if (spec == null || !spec.acceptsArgCount(cmd.argCount())) {
            return null;
        }
        return spec;
    }

    /** Runs {@code t} holding its keys exclusively in the gate; releases it when done. */
    private static CompletableFuture<Void> runGated(ClusterNode node, Session s, Transaction t, Reply r,
                                                    byte[][] keys) {
        CompletableFuture<Runnable> held = s.server.keyGate().exclusive(keys);
        return Async.andFinally(() -> Async.then(held, r, unlock ->
                Async.andFinally(() -> runHeld(node, s, t, r, keys), unlock)), t::release);
    }

    /** With the keys held in the gate: the WATCH check, then the queue, as a cluster write where there is one. */
    private static CompletableFuture<Void> runHeld(ClusterNode node, Session s, Transaction t, Reply r,
                                                   byte[][] keys) {
        boolean broken = s.watch != null && s.watch.broken();
        s.unwatch(); // before running: the transaction's own writes must not count as changes (nor do in Redis)
        if (broken) {
            r.nullArray();
            return null;
        }
        if (node == null || keys.length == 0) {
            return runQueue(s, t, r);
        }
        return ClusterRouter.asPrimary(node, s, r, keys, t.writes(), node.ensureLocal(keys),
                () -> runQueue(s, t, r), () -> { });
    }

    /** Answers the array of the queued commands' replies; null when every command completed inline. */
    private static CompletableFuture<Void> runQueue(Session s, Transaction t, Reply r) {
        r.array(t.size());
        s.holdsKeyGate = true;
        CompletableFuture<Void> done = null;
        try {
            done = runFrom(s, t, r, 0);
            return done == null ? null : done.whenComplete((v, e) -> s.holdsKeyGate = false);
        } finally {
            if (done == null) {
                s.holdsKeyGate = false;
            }
        }
    }

    private static CompletableFuture<Void> runFrom(Session s, Transaction t, Reply r, int from) {
        for (int i = from; i < t.size(); i++) {
            RespCommand cmd = t.command(i);
            CompletableFuture<Void> done;
            try {
                done = Dispatcher.run(t.spec(i), s, cmd, r, false);
            } finally {
                cmd.release();
            }
            int next = i + 1;
            if (done != null && !done.isDone()) {
                return done.thenCompose(v -> orDone(runFrom(s, t, r, next)));
            }
            if (next < t.size() && next % SLICE == 0) {
                // A long transaction yields the event loop between slices; its keys stay held. Scheduled, not
                // executed: Netty would run a resubmitted task before the next round of I/O.
                r.flush();
                CompletableFuture<Void> rest = new CompletableFuture<>();
                r.executor().schedule(() -> {
                    CompletableFuture<Void> f = runFrom(s, t, r, next);
                    if (f == null) {
                        rest.complete(null);
                    } else {
                        f.whenComplete((v, e) -> rest.complete(null));
                    }
                }, 1, java.util.concurrent.TimeUnit.MICROSECONDS);
                return rest;
            }
        }
        return null;
    }

    private static CompletableFuture<Void> orDone(CompletableFuture<Void> f) {
        return f == null ? CompletableFuture.completedFuture(null) : f;
    }
}
