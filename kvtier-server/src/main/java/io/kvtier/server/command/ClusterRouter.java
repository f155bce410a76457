package io.kvtier.server.command;

import io.kvtier.client.HostPort;
import io.kvtier.client.cluster.ClusterError;
import io.kvtier.client.cluster.SlotHash;
import io.kvtier.cluster.Member;
import io.kvtier.cluster.error.ClusterDownException;
import io.kvtier.cluster.error.ClusterException;
import io.kvtier.cluster.error.CrossSlotException;
import io.kvtier.cluster.error.MovedException;
import io.kvtier.cluster.error.TryAgainException;
import io.kvtier.cluster.error.UnreachableException;
import io.kvtier.cluster.node.ClusterNode;
import io.kvtier.cluster.node.HeldWrite;
import io.kvtier.resp.RespCommand;
import io.kvtier.server.reply.CommandException;
import io.kvtier.server.reply.Reply;
import io.kvtier.server.value.Values;
import java.net.ConnectException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Where a keyed command runs in a cluster: here as the slot's primary (fetching keys of an importing slot first, and
 * answering writes only once the backups have them), here as a backup for READONLY sessions, at the primary through
 * this node (--proxy, for cluster-unaware clients), or nowhere (-MOVED for cluster clients, -CLUSTERDOWN, -CROSSSLOT).
 * Multi-key commands whose keys live on several nodes are split by owner and their replies merged.
 */
final class ClusterRouter {
    /** Commands a proxy splits by owner; the rest must keep their keys in one slot, as in Redis Cluster. */
    private static final Set<String> SPLITTABLE = Set.of("mget", "mset", "del", "unlink", "exists", "touch",
            "kvc.lookup", "kvc.prefix");
    /** Between retries of a proxied call that was refused: about how long a table change takes to reach a node. */
    private static final long RETRY_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    /** How long past its budget a proxied call waits for the outcome of a try still out (see {@link #send}). */
    private static final long OUTCOME_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private static final int[] NO_KEYS = new int[0];

    /** States of a proxied call: no try out, a try out, out of time (see {@link #attempt}). */
    private static final int IDLE = 0;
    private static final int IN_FLIGHT = 1;
    private static final int TIMED_OUT = 2;

    private ClusterRouter() {
    }

    static boolean routed(CommandSpec spec) {
        // WATCH registers here or nowhere: forwarding it would watch on the owner's connection, not the client's.
        return spec.firstKey() > 0 && !spec.name().startsWith("kvt.") && !spec.name().equals("watch");
    }

    /** CLUSTERDOWN unless this node serves its slot table. */
    static void requireServing(ClusterNode.Topology t) {
        if (!t.serving()) {
            throw new ClusterDownException(t.downReason());
        }
    }

    /** The primary of {@code slot} under {@code t}; CLUSTERDOWN when the slot has none. */
    static Member primaryOf(ClusterNode.Topology t, int slot) {
        Member primary = t.table().isOwned() ? t.table().primary(slot) : null;
        if (primary == null) {
            throw new ClusterDownException("Hash slot not served");
        }
        return primary;
    }

    /** The one slot every key hashes to (Redis Cluster's rule for a multi-key unit); CROSSSLOT otherwise. */
    static int oneSlot(byte[][] keys) {
        int slot = SlotHash.slot(keys[0]);
        for (byte[] k : keys) {
            if (SlotHash.slot(k) != slot) {
                throw new CrossSlotException();
            }
        }
        return slot;
    }

    /** The redirection of a command for {@code slot} to its primary, counted. */
    static MovedException moved(ClusterNode node, int slot, Member primary) {
        node.counters.movedReplies().increment();
        return new MovedException(slot, primary.endpoint());
    }

    static CompletableFuture<Void> dispatch(ClusterNode node, CommandSpec spec, Session s, RespCommand c, Reply r) {
        ClusterNode.Topology t = node.topology();
        requireServing(t);
        int[] keys = keyIndexes(spec, c);
        if (keys.length == 0) {
            return spec.action().execute(s, c, r);
        }
        int slot = SlotHash.slot(c.bytes(keys[0]));
        boolean oneSlot = true;
        for (int k : keys) {
            oneSlot &= SlotHash.slot(c.bytes(k)) == slot;
        }
        if (!oneSlot) {
            return multiSlot(node, t, spec, s, c, r, keys);
        }
        Member primary = primaryOf(t, slot);
        if (t.isSelf(primary)) {
            return asPrimary(node, spec, s, c, r, keys);
        }
        if (s.readOnly && !isWrite(spec) && node.complete(slot)
                && t.table().owners(slot).stream().anyMatch(t::isSelf)) {
            return spec.action().execute(s, c, r); // a replica read (READONLY), as in Redis Cluster
        }
        if (!node.settings().proxy() || s.clusterAware) {
            throw moved(node, slot, primary);
        }
        return forward(node, t, primary, s, c, r, allIndexes(c));
    }

    /**
     * A multi-key command whose keys have several primaries: run here if they are all this node's; otherwise split by
     * owner (a cluster-unaware client through the proxy, for the commands that can be split), sent, and merged.
     */
    private static CompletableFuture<Void> multiSlot(ClusterNode node, ClusterNode.Topology t, CommandSpec spec,
                                                     Session s, RespCommand c, Reply r, int[] keys) {
        Map<Member, List<Integer>> byOwner = new LinkedHashMap<>();
        for (int k : keys) {
            byOwner.computeIfAbsent(primaryOf(t, SlotHash.slot(c.bytes(k))), x -> new ArrayList<>()).add(k);
        }
        if (byOwner.size() == 1 && t.isSelf(byOwner.keySet().iterator().next())) {
            return asPrimary(node, spec, s, c, r, keys);
        }
        if (!SPLITTABLE.contains(spec.name()) || !node.settings().proxy() || s.clusterAware) {
            throw new CrossSlotException();
        }
        List<Member> owners = new ArrayList<>(byOwner.keySet());
        List<CompletableFuture<io.kvtier.client.Reply>> parts = new ArrayList<>();
        for (Member owner : owners) {
            parts.add(send(node, t, owner, c, partIndexes(byOwner.get(owner), spec.step() == 2),
                    s.commandStartNanos));
        }
        String name = spec.name();
        CompletableFuture<Void> all = CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new));
        return all.handleAsync((v, e) -> {
            List<io.kvtier.client.Reply> replies = new ArrayList<>();
            try {
                for (CompletableFuture<io.kvtier.client.Reply> p : parts) {
                    replies.add(p.isCompletedExceptionally() ? null : p.join());
                }
                checkParts(owners, parts, replies);
                merge(name, c, keys, byOwner, owners, replies, r);
                return null;
            } finally {
                replies.forEach(io.kvtier.client.Reply::release);
            }
        }, r.executor());
    }

    /** The argument indexes of one owner's part: the command name, then its keys (with their values for MSET). */
    private static int[] partIndexes(List<Integer> keys, boolean pairs) {
        int[] idx = new int[1 + keys.size() * (pairs ? 2 : 1)];
        int n = 1; // idx[0] = 0, the command name
        for (int k : keys) {
            idx[n++] = k;
            if (pairs) {
                idx[n++] = k + 1;
            }
        }
        return idx;
    }

    /** Fails the split command with the first part that got no reply or an error reply. */
    private static void checkParts(List<Member> owners, List<CompletableFuture<io.kvtier.client.Reply>> parts,
                                   List<io.kvtier.client.Reply> replies) {
        for (int i = 0; i < parts.size(); i++) {
            if (replies.get(i) == null) {
                throw failure(owners.get(i), cause(parts.get(i)));
            }
            if (replies.get(i) instanceof io.kvtier.client.Reply.Error err) {
                throw new CommandException(err.message());
            }
        }
    }

    private static void merge(String name, RespCommand c, int[] keys, Map<Member, List<Integer>> byOwner,
                              List<Member> owners, List<io.kvtier.client.Reply> replies, Reply r) {
        switch (name) {
            case "mget", "kvc.lookup" -> {
                Map<Integer, io.kvtier.client.Reply> byKey = new java.util.HashMap<>();
                for (int i = 0; i < owners.size(); i++) {
                    List<Integer> ks = byOwner.get(owners.get(i));
                    List<io.kvtier.client.Reply> elements = ((io.kvtier.client.Reply.Aggregate) replies.get(i))
                            .elements();
                    for (int j = 0; j < ks.size(); j++) {
                        byKey.put(ks.get(j), elements.get(j));
                    }
                }
                r.array(keys.length);
                for (int k : keys) {
                    relay(r, byKey.get(k), true);
                }
            }
            case "mset" -> r.ok();
            case "kvc.prefix" -> {
                // Each owner counted the present prefix of its own keys (in request order): the first absent key of
                // the whole request is the earliest of the owners' first absent keys.
                int firstAbsent = keys.length;
                for (int i = 0; i < owners.size(); i++) {
                    List<Integer> ks = byOwner.get(owners.get(i));
                    long present = ((io.kvtier.client.Reply.Int) replies.get(i)).value();
                    if (present < ks.size()) {
                        int keyIndex = ks.get((int) present);
                        for (int j = 0; j < keys.length; j++) {
                            if (keys[j] == keyIndex) {
                                firstAbsent = Math.min(firstAbsent, j);
                            }
                        }
                    }
                }
                r.integer(firstAbsent);
            }
            default -> {
                long sum = 0;
                for (io.kvtier.client.Reply x : replies) {
                    sum += ((io.kvtier.client.Reply.Int) x).value();
                }
                r.integer(sum);
            }
        }
    }

    /**
     * Runs {@code c} here as the primary of its keys' slots. Keys of importing slots are fetched first. A write holds
     * its keys' locks, applies, replicates the keys' new state to the backups and only then releases its reply and
     * its keys (--replication sync; async releases them at once). With sync, a read takes the keys' locks too, so it
     * never sees a value the backups have not confirmed.
     */
    static CompletableFuture<Void> asPrimary(ClusterNode node, CommandSpec spec, Session s, RespCommand c, Reply r,
                                             int[] keys) {
        byte[][] keyBytes = new byte[keys.length][];
        for (int i = 0; i < keys.length; i++) {
            keyBytes[i] = c.bytes(keys[i]);
        }
        boolean write = isWrite(spec);
        boolean young = System.nanoTime() - s.commandStartNanos < node.settings().peerTimeout().toNanos();
        if (write && young && node.behind()) {
            // Installing a newer table takes milliseconds (a node's failure, a slot move): the write waits for it, as
            // for an importing slot below, and is dispatched again under the new table (which may route it
            // elsewhere), rather than failing with TRYAGAIN at once.
            return waitWritable(node, spec, s, c, r);
        }
        checkNotBehind(node, write);
        try {
            checkServable(node, keyBytes);
        } catch (TryAgainException e) {
            // Behind a handoff's fence (the other members have not yet confirmed the table that made this node the
            // slot's primary: a renewal away) or just included: a read or a write waits it out, as a write waits for
            // a table's install, rather than answering TRYAGAIN, which most clients do not retry.
            if (young) {
                return waitWritable(node, spec, s, c, r);
            }
            throw e;
        }
        if (write && !allWritable(node, keyBytes)) { // early, before fetching; checked again under the keys' locks
            if (young) {
                return waitWritable(node, spec, s, c, r);
            }
            checkWritable(node, keyBytes); // TRYAGAIN, counted (unless the slot became complete just now)
        }
        CompletableFuture<Void> ready = node.ensureLocal(keyBytes);
        if (!write && ready == null && !node.settings().syncReplication()) {
            return spec.action().execute(s, c, r);
        }
        RespCommand own = c.take(allIndexes(c)); // the caller releases c when this returns; own lives on
        // The table can change while the command waits for its keys' locks or its fetches: then, still young, it is
        // dispatched again (as above) instead of answering TRYAGAIN. Exactly one of own::release (the command ran, or
        // failed for good) and this (it did not run) ends own.
        Supplier<CompletableFuture<Void>> again = () -> Async.andFinally(() -> waitWritable(node, spec, s, own, r),
                own::release);
        return asPrimary(node, s, r, keyBytes, write, ready, () -> spec.action().execute(s, own, r), own::release,
                again);
    }

    /** Whether {@code s}'s command began less than a peer timeout ago: it may still wait rather than fail. */
    private static boolean young(ClusterNode node, Session s) {
        return System.nanoTime() - s.commandStartNanos < node.settings().peerTimeout().toNanos();
    }

    /**
     * A write cannot run while this node installs a newer slot table: TRYAGAIN (a write through {@link #asPrimary}
     * first waits up to the peer timeout for the install).
     */
    static void checkNotBehind(ClusterNode node, boolean write) {
        if (write && node.behind()) {
            node.counters.refusedWrites().increment();
            throw new TryAgainException("this node is installing a newer slot table; retry");
        }
    }

    /**
     * TRYAGAIN (nothing ran) unless this node may serve {@code keys}' slots as their primary now: it holds its lease
     * and no former primary can still be serving them (see {@link ClusterNode#checkServable}).
     */
    static void checkServable(ClusterNode node, byte[][] keys) {
        eachSlot(keys, node::checkServable);
    }

    /** TRYAGAIN (nothing ran) unless every one of {@code keys}' slots takes writes ({@link ClusterNode#checkWritable}). */
    static void checkWritable(ClusterNode node, byte[][] keys) {
        eachSlot(keys, node::checkWritable);
    }

    /**
     * How often a write waiting for its slot to become complete, or for a newer table's install
     * ({@link #waitWritable}), looks again.
     */
    static final long WRITABLE_POLL_MS = 10;

    private static boolean allWritable(ClusterNode node, byte[][] keys) {
        if (!node.settings().syncReplication()) {
            return true; // every slot takes writes (ClusterNode#writable): no slot to hash
        }
        for (byte[] key : keys) {
            if (!node.writable(SlotHash.slot(key))) {
                return false;
            }
        }
        return true;
    }

    /**
     * A command this node cannot serve for a moment waits, up to the peer timeout from its start, instead of
     * answering TRYAGAIN at once: a write to a slot whose owners are all still importing it (just after a table
     * change; the importer's report that it is complete commits with its next renewal, sent as soon as the import
     * ends), a write while a newer table installs, a read or write behind a handoff's fence. A client sees a slower
     * command, not an error, across an ordinary handoff. It is dispatched again from the start every {@link #WRITABLE_POLL_MS}
     * (the table may change meanwhile); the connection's later commands wait behind it, in order.
     */
    private static CompletableFuture<Void> waitWritable(ClusterNode node, CommandSpec spec, Session s, RespCommand c,
                                                        Reply r) {
        RespCommand own = c.take(allIndexes(c)); // the caller releases c when this returns; own lives on
        CompletableFuture<Void> later = new CompletableFuture<>();
        r.executor().schedule(() -> later.complete(null), WRITABLE_POLL_MS, java.util.concurrent.TimeUnit.MILLISECONDS);
        return Async.andFinally(() -> Async.then(later, r, v -> dispatch(node, spec, s, own, r)), own::release);
    }

    /** Runs {@code check} on the slot of each of {@code keys}, once per run of keys in the same slot. */
    private static void eachSlot(byte[][] keys, java.util.function.IntConsumer check) {
        int last = -1;
        for (byte[] key : keys) {
            int slot = SlotHash.slot(key);
            if (slot != last) {
                check.accept(slot);
                last = slot;
            }
        }
    }

    /**
     * Runs {@code check} for a command that holds its keys' locks. On a refusal it releases them, and then returns
     * {@code again}'s future when the refusal is a TRYAGAIN (nothing ran) and {@code again} is there and the command
     * still young: it waits and is dispatched again; otherwise it cleans up and throws. Null when the check passed.
     */
    private static CompletableFuture<Void> recheck(ClusterNode node, Session s, Runnable check, Runnable unlock,
                                                   Runnable cleanup, Supplier<CompletableFuture<Void>> again) {
        try {
            check.run();
            return null;
        } catch (RuntimeException e) {
            unlock.run();
            if (e instanceof TryAgainException && again != null && young(node, s)) {
                return again.get();
            }
            cleanup.run();
            throw e;
        }
    }

    /**
     * Runs {@code body} here as the primary of {@code keys} once {@code ready} (the fetch of importing keys, or null)
     * is done: a write under the keys' locks, replicating their state afterwards (see {@link #applyAndReplicate}).
     * With --replication sync a read runs under the locks too: a write keeps them until its backups confirm it, so
     * readers wait for the outcome. Locks not had within the peer timeout of the command's start: TRYAGAIN, not run.
     * {@code cleanup} runs once, when {@code body} has run or never will.
     */
    static CompletableFuture<Void> asPrimary(ClusterNode node, Session s, Reply r, byte[][] keys, boolean write,
                                             CompletableFuture<Void> ready, Supplier<CompletableFuture<Void>> body,
                                             Runnable cleanup) {
        return asPrimary(node, s, r, keys, write, ready, body, cleanup, null);
    }

    /**
     * As above; a command that finds, once it holds its keys' locks, that it may not run after all (the table changed
     * while it waited, or its slot takes no writes now: TRYAGAIN) runs {@code again} instead of {@code cleanup} while
     * it is young, if {@code again} is not null (see {@link #recheck}).
     */
    private static CompletableFuture<Void> asPrimary(ClusterNode node, Session s, Reply r, byte[][] keys,
                                                     boolean write, CompletableFuture<Void> ready,
                                                     Supplier<CompletableFuture<Void>> body, Runnable cleanup,
                                                     Supplier<CompletableFuture<Void>> again) {
        try {
            checkServable(node, keys);
        } catch (RuntimeException e) {
            cleanup.run();
            throw e;
        }
        CompletableFuture<Void> start = ready == null ? CompletableFuture.completedFuture(null) : ready;
        boolean sync = node.settings().syncReplication();
        if (!write && !sync) {
            return Async.andFinally(() -> Async.then(start, r, v -> body.get()), cleanup);
        }
        long deadline = s.commandStartNanos + node.settings().peerTimeout().toNanos();
        CompletableFuture<Runnable> locked = start.thenCompose(v -> node.locks().lockBefore(deadline, keys));
        locked.whenComplete((unlock, e) -> {
            if (e != null) {
                cleanup.run();
            }
        });
        if (!write) {
            return Async.then(locked, r, unlock -> {
                CompletableFuture<Void> refused = recheck(node, s, () -> {
                    checkServable(node, keys); // the wait may have outlasted the lease or the table
                    if (!HeldWrite.primaryOfAll(node.topology(), keys)) {
                        // The table changed while it waited: a write it waited for may have been given up unconfirmed
                        // (its value still here, never to be seen), and the keys' new primary serves them now.
                        throw new TryAgainException("the slot table changed while this read waited for its keys;"
                                + " retry");
                    }
                }, unlock, cleanup, again);
                if (refused != null) {
                    return refused;
                }
                return Async.andFinally(() -> Async.andFinally(body, cleanup), unlock);
            });
        }
        return Async.then(locked, r, unlock -> applyAndReplicate(node, s, r, keys, unlock, body, cleanup, again,
                deadline));
    }

    /**
     * Runs a write whose keys' locks are held, replicates the keys' resulting state and answers. The topology is read
     * again under the locks: a write that waited while a newer table arrived, or while a peer spoke of one (a new
     * owner may already have copied these keys), has not run and is refused. With --replication sync the keys stay
     * locked until the backups confirm their state ({@link HeldWrite}), and the client is answered then, or
     * -UNREPLICATED at {@code deadline} (or, for a body that itself ran past it, a peer timeout after it finished); a
     * write that fails still holds its keys until its state is confirmed: it may have changed one before failing.
     * With async the client is answered at once and the keys released when the backups have answered. A write
     * refused here has not run: while young it waits and is dispatched again ({@code again}, see {@link #recheck}).
     */
    private static CompletableFuture<Void> applyAndReplicate(ClusterNode node, Session s, Reply r, byte[][] keys,
                                                             Runnable unlock, Supplier<CompletableFuture<Void>> body,
                                                             Runnable cleanup, Supplier<CompletableFuture<Void>> again,
                                                             long deadline) {
        ClusterNode.Topology t = node.topology();
        CompletableFuture<Void> refused = recheck(node, s, () -> {
            if (node.behind() || !t.serving() || !HeldWrite.primaryOfAll(t, keys)) {
                node.counters.refusedWrites().increment();
                throw new TryAgainException("the slot table changed while this write waited for its keys; retry");
            }
            checkServable(node, keys);
            checkWritable(node, keys);
        }, unlock, cleanup, again);
        if (refused != null) {
            return refused;
        }
        boolean sync = node.settings().syncReplication();
        long[] drops = sync ? node.drops(keys) : null; // only a held write (sync) checks them
        // One cluster version for every value this command stores: the puts take it when they start, all within the
        // body's synchronous part, and the keys it changed otherwise (an expiry) are stamped with it once it ran.
        long version = s.server.replicator().versions().next(t.table().epoch());
        r.hold();
        CompletableFuture<Void> applied;
        s.writeVersion = version;
        try {
            applied = body.get();
        } catch (RuntimeException e) {
            r.dropHeld();
            cleanup.run();
            stamp(node, keys, version);
            settle(node, s, keys, t, sync, deadline, drops, unlock);
            throw e;
        } finally {
            s.writeVersion = 0;
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        (applied == null ? CompletableFuture.<Void>completedFuture(null) : applied).whenCompleteAsync((v, e) -> {
            cleanup.run();
            stamp(node, keys, version);
            CompletableFuture<Void> copies = settle(node, s, keys, t, sync, deadline, drops, unlock);
            if (e != null) {
                r.dropHeld();
                done.completeExceptionally(e);
                return;
            }
            if (!sync) {
                r.releaseHeld();
                done.complete(null);
                return;
            }
            copies.whenCompleteAsync((x, failed) -> {
                if (failed != null) {
                    r.dropHeld();
                    done.completeExceptionally(failed);
                } else {
                    r.releaseHeld();
                    done.complete(null);
                }
            }, r.executor());
        }, r.executor());
        return done;
    }

    /**
     * Gives every one of {@code keys} that exists the command's cluster version (its puts gave it to what they
     * stored; this covers the rest it changed, an expiry say), so that a key's state has one version on every node.
     */
    private static void stamp(ClusterNode node, byte[][] keys, long version) {
        for (byte[] key : keys) {
            node.store().setVersion(key, version);
        }
    }

    /**
     * Replicates the state of {@code keys}, written under {@code t}, and runs {@code unlock} once it is settled: with
     * sync, when the backups of the then-current topology confirmed it (or this node stopped being the keys' primary);
     * the returned future fails with UNREPLICATED if that is not by {@code deadline}. With async, after one attempt.
     */
    private static CompletableFuture<Void> settle(ClusterNode node, Session s, byte[][] keys, ClusterNode.Topology t,
                                                  boolean sync, long deadline, long[] drops, Runnable unlock) {
        if (!sync) {
            CompletableFuture<Void> copies = replicate(s, keys, t);
            copies.whenComplete((x, f) -> unlock.run());
            return copies;
        }
        long now = System.nanoTime();
        long answerBy = now - deadline > 0 ? now + node.settings().peerTimeout().toNanos() : deadline;
        return HeldWrite.confirm(node, s.server.replicator(), keys, answerBy, drops, unlock);
    }

    /**
     * Checks that a script may run here in a cluster. Its KEYS must share one slot (CROSSSLOT otherwise), which this
     * node must be the primary of, else every client gets -MOVED (a script is not proxied: it may run for long, and its
     * keys are held where it runs). A script without keys can touch none and
     * runs anywhere. The script then runs through {@link #asPrimary} as one write (or read, for EVAL_RO).
     */
    static void checkScript(ClusterNode node, byte[][] keys, boolean write) {
        ClusterNode.Topology t = node.topology();
        requireServing(t);
        if (keys.length == 0) {
            return;
        }
        int slot = oneSlot(keys);
        Member primary = primaryOf(t, slot);
        if (!t.isSelf(primary)) {
            // A script is not proxied (it runs where its keys' locks are): -MOVED, as Redis Cluster answers, to every
            // client. Cluster clients ask for the topology on a connection of their own, so this connection having
            // asked or not says nothing about whether its client follows redirections.
            throw moved(node, slot, primary);
        }
        checkNotBehind(node, write);
    }

    /** The replication of {@code keys}' state under {@code t}; a failure to even start it is a failed future. */
    private static CompletableFuture<Void> replicate(Session s, byte[][] keys, ClusterNode.Topology t) {
        try {
            return s.server.replicator().replicate(keys, t);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Forwards {@code c} (its arguments {@code indexes}) to {@code owner}, relaying the reply. */
    private static CompletableFuture<Void> forward(ClusterNode node, ClusterNode.Topology t, Member owner, Session s,
                                                   RespCommand c, Reply r, int[] indexes) {
        return relayed(send(node, t, owner, c, indexes, s.commandStartNanos), owner, r);
    }

    /** Writes the reply of {@code sent} to {@code r} on its event loop, or the error for a call that got none. */
    static CompletableFuture<Void> relayed(CompletableFuture<io.kvtier.client.Reply> sent, Member owner, Reply r) {
        return sent.handleAsync((reply, e) -> {
            if (e != null) {
                throw failure(owner, cause(e));
            }
            relay(r, reply, false);
            return null;
        }, r.executor());
    }

    /**
     * Sends arguments {@code indexes} of {@code c} to {@code owner} as KVT.FWD. A refusal that says the command did not
     * run (TRYAGAIN while the owner installs a newer table or imports, or a refused connection to a node that just
     * died) is retried against the then-current primary, so a proxied call rides through a failover; the whole call,
     * retries and queueing on the peer connection included, fails once the peer timeout has passed since the client's
     * command started ({@code startNanos}), or at most 100 ms later while a try that may have reached the owner is
     * still out: no client waits longer than that.
     */
    private static CompletableFuture<io.kvtier.client.Reply> send(ClusterNode node, ClusterNode.Topology t,
                                                                 Member owner, RespCommand c, int[] indexes,
                                                                 long startNanos) {
        Object[] args = new Object[indexes.length + 2];
        args[0] = "KVT.FWD";
        for (int i = 0; i < indexes.length; i++) {
            args[i + 2] = c.isSink(indexes[i]) ? Values.toByteBuf(c, indexes[i]) : c.bytes(indexes[i]);
        }
        return send(node, t, owner, args, indexes.length > 1 ? c.bytes(indexes[1]) : new byte[0], startNanos);
    }

    /**
     * Sends {@code args} ("KVT.FWD", a slot for the epoch stamp, the command) to {@code owner}, retrying as above;
     * {@code firstKey} finds the primary to retry at; the budget is the peer timeout from {@code startNanos}.
     * Releases the buffers among {@code args} when done.
     */
    static CompletableFuture<io.kvtier.client.Reply> send(ClusterNode node, ClusterNode.Topology t, Member owner,
                                                         Object[] args, byte[] firstKey, long startNanos) {
        node.counters.forwarded().increment();
        long deadline = startNanos + node.settings().peerTimeout().toNanos();
        CompletableFuture<io.kvtier.client.Reply> result = new CompletableFuture<>();
        AtomicInteger state = new AtomicInteger(IDLE);
        // Decided when the time runs out (on the timer's thread), before another try could start: between tries the
        // command did not run (TRYAGAIN). With a try out, its outcome is usually a few milliseconds away (a refused
        // connection to a node that just stopped, the owner's refusal as its own budget ends, a late reply) and says
        // whether it ran: it is waited for a little longer before the answer is "may or may not have run". Answering
        // at once turned a refused connect that happened to be out at the deadline into -UNREACHABLE for a command
        // that never left this node (MiniClusterFailoverIT's rolling restart, on a loaded machine).
        CompletableFuture.delayedExecutor(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS).execute(() -> {
            if (state.compareAndSet(IDLE, TIMED_OUT)) {
                result.completeExceptionally(new TryAgainException(
                        "no node took the command within the peer timeout; not run"));
            } else if (!result.isDone()) {
                CompletableFuture.delayedExecutor(OUTCOME_GRACE_NANOS, TimeUnit.NANOSECONDS).execute(() -> {
                    if (!result.isDone()) {
                        state.set(TIMED_OUT);
                        result.completeExceptionally(new java.util.concurrent.TimeoutException());
                    }
                });
            }
        });
        attempt(node, owner, t.table().epoch(), args, firstKey, deadline, result, state);
        return result.whenComplete((x, e) -> {
            if (e != null) {
                node.counters.forwardFailures().increment();
            }
            for (Object a : args) {
                if (a instanceof io.netty.buffer.ByteBuf b && b.refCnt() > 0) {
                    b.release();
                }
            }
        });
    }

    /**
     * One try of a proxied call. {@code state} is {@link #IN_FLIGHT} while a try is out (it may run at the owner),
     * {@link #IDLE} before the first and between a refusal and the next, so a call whose time runs out then answers
     * TRYAGAIN (it did not run), and {@link #TIMED_OUT} after that, when no try may start any more.
     */
    private static void attempt(ClusterNode node, Member owner, long epoch, Object[] args, byte[] key, long deadline,
                                CompletableFuture<io.kvtier.client.Reply> result, AtomicInteger state) {
        if (result.isDone() || !state.compareAndSet(IDLE, IN_FLIGHT)) {
            return; // timed out while waiting to retry
        }
        Object[] copy = args.clone();
        copy[1] = ClusterNode.requestEpoch(epoch, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
        try {
            for (int i = 2; i < copy.length; i++) {
                if (copy[i] instanceof io.netty.buffer.ByteBuf b) {
                    copy[i] = b.retainedDuplicate();
                }
            }
        } catch (io.netty.util.IllegalReferenceCountException timedOut) {
            // The call timed out between the check above and here and released its arguments.
            for (int i = 2; i < copy.length; i++) {
                if (copy[i] instanceof io.netty.buffer.ByteBuf b && b != args[i]) {
                    b.release();
                }
            }
            return;
        }
        node.send(ClusterNode.Lane.FORWARD, owner, copy).whenComplete((reply, e) -> {
            boolean retry = System.nanoTime() + RETRY_PAUSE_NANOS < deadline && (e != null && notSent(cause(e))
                    || reply instanceof io.kvtier.client.Reply.Error err && ClusterError.parse(err.message(),
                    new HostPort(owner.host(), owner.port())) instanceof ClusterError.TryAgain);
            if (!retry) {
                boolean taken = e != null ? result.completeExceptionally(e) : result.complete(reply);
                if (!taken) {
                    io.kvtier.client.Reply.release(reply); // the call had timed out meanwhile
                }
                return;
            }
            state.set(IDLE);
            io.kvtier.client.Reply.release(reply);
            CompletableFuture.delayedExecutor(RETRY_PAUSE_NANOS, TimeUnit.NANOSECONDS).execute(() -> {
                ClusterNode.Topology now = node.topology();
                Member primary = now.serving() && now.table().isOwned() ? now.table().primary(SlotHash.slot(key))
                        : null;
                Member next = primary != null ? primary : owner; // no owner up: try the last one, it says TRYAGAIN
                attempt(node, next, now.table().epoch(), args, key, deadline, result, state);
            });
        });
    }

    /** Whether a send failed before the peer could have run the command (it could not even be connected to). */
    private static boolean notSent(Throwable e) {
        return e instanceof ConnectException;
    }

    static Throwable cause(Object futureOrError) {
        Throwable e = futureOrError instanceof CompletableFuture<?> f ? f.handle((v, x) -> x).join()
                : (Throwable) futureOrError;
        while (e instanceof CompletionException && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }

    /**
     * The error for a forwarded call that got no reply: TRYAGAIN only when the command never reached {@code owner}
     * (Redis Cluster's "not run, resend"); otherwise it may have run there, and a write must not be resent blindly.
     */
    private static ClusterException failure(Member owner, Throwable e) {
        if (e instanceof TryAgainException notRun) {
            return notRun;
        }
        String who = "node " + owner.id() + " (" + owner.endpoint() + ")";
        if (notSent(e)) {
            return new TryAgainException(who + " could not be reached: " + e.getMessage());
        }
        String why = e instanceof java.util.concurrent.TimeoutException ? "no reply within the peer timeout"
                : e.getMessage();
        return new UnreachableException(who + " did not answer (" + why + "); a write may or may not have run"
                + " there: read the key to see");
    }

    /** Writes a peer's reply to {@code r} and releases it unless {@code keep}. */
    static void relay(Reply r, io.kvtier.client.Reply x, boolean keep) {
        switch (x) {
            case io.kvtier.client.Reply.Simple v -> r.simple(v.text());
            case io.kvtier.client.Reply.Error v -> r.error(v.message());
            case io.kvtier.client.Reply.Int v -> r.integer(v.value());
            case io.kvtier.client.Reply.Bulk v -> r.bulk(v.content().retain());
            case io.kvtier.client.Reply.Null v -> r.nil();
            case io.kvtier.client.Reply.Aggregate v -> {
                switch (v.type()) {
                    case '%' -> r.map(v.elements().size() / 2);
                    case '~' -> r.set(v.elements().size());
                    default -> r.array(v.elements().size());
                }
                for (io.kvtier.client.Reply e : v.elements()) {
                    relay(r, e, true);
                }
            }
            case io.kvtier.client.Reply.Other v -> r.simple(v.text());
        }
        if (!keep) {
            io.kvtier.client.Reply.release(x);
        }
    }

    static boolean isWrite(CommandSpec spec) {
        for (String f : spec.flags()) {
            if (f.equals("write")) {
                return true;
            }
        }
        return false;
    }

    static int[] keyIndexes(CommandSpec spec, RespCommand c) {
        if (spec.firstKey() <= 0 || c.argCount() <= spec.firstKey()) {
            return NO_KEYS;
        }
        int last = spec.lastKey() < 0 ? c.argCount() + spec.lastKey() : Math.min(spec.lastKey(), c.argCount() - 1);
        int step = Math.max(1, spec.step());
        if (last < spec.firstKey()) {
            return NO_KEYS;
        }
        int[] out = new int[(last - spec.firstKey()) / step + 1];
        for (int i = 0, k = spec.firstKey(); i < out.length; i++, k += step) {
            out[i] = k;
        }
        return out;
    }

    static int[] allIndexes(RespCommand c) {
        int[] all = new int[c.argCount()];
        for (int i = 0; i < all.length; i++) {
            all[i] = i;
        }
        return all;
    }
}
