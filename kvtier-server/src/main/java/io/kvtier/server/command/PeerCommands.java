package io.kvtier.server.command;

import static io.kvtier.server.command.CommandSpec.of;

import io.kvtier.client.cluster.SlotHash;
import io.kvtier.cluster.error.TryAgainException;
import io.kvtier.cluster.node.ClusterNode;
import io.kvtier.cluster.node.Replicator;
import io.kvtier.cluster.node.StateVersions;
import io.kvtier.resp.RespCommand;
import io.kvtier.server.reply.CommandException;
import io.kvtier.server.reply.Reply;
import io.kvtier.server.value.Values;
import io.kvtier.store.PutOptions;
import io.kvtier.store.PutOptions.Condition;
import io.kvtier.store.TieredStore;
import io.kvtier.store.ValueRef;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The node-to-node commands (KVT.*), sent over kvtier-client connections; every one carries the sender's slot-table
 * epoch. A replication from an older epoch than this node's is refused (-STALE), so a primary that missed a table
 * change cannot acknowledge a write the new owners will not see; one from a newer epoch waits (-TRYAGAIN) until this
 * node has installed it. Clients may call them (they are plain RESP), but
 * they are internal: not in COMMAND's documentation and subject to change.
 */
final class PeerCommands {
    /** How long before its sender's deadline a forwarded command answers, leaving time for the reply to travel. */
    private static final long FWD_MARGIN_MILLIS = 100;

    private PeerCommands() {
    }

    static List<CommandSpec> specs() {
        return List.of(
                of("kvt.fwd", -4, "write loading stale", 0, 0, 0, PeerCommands::fwd),
                of("kvt.repl", 6, "write loading stale", 0, 0, 0, PeerCommands::repl),
                of("kvt.rdel", 4, "write loading stale", 0, 0, 0, PeerCommands::rdel),
                of("kvt.replm", -6, "write loading stale", 0, 0, 0, PeerCommands::replm),
                of("kvt.peek", -3, "readonly loading stale", 0, 0, 0, PeerCommands::peek),
                of("kvt.slotkeys", -5, "readonly loading stale", 0, 0, 0, PeerCommands::slotKeys),
                of("kvt.slotinfo", 2, "readonly loading stale", 0, 0, 0, PeerCommands::slotInfo),
                of("kvt.flush", 2, "write loading stale", 0, 0, 0, PeerCommands::flush));
    }

    private static ClusterNode node(Session s) {
        ClusterNode node = s.server.cluster();
        if (node == null) {
            throw new CommandException("ERR This instance has cluster support disabled");
        }
        return node;
    }

    /** A peer request's epoch, from its {@link PeerStamp} (first argument). */
    static long epoch(RespCommand c) {
        return PeerStamp.parse(c.bytes(1)).epoch();
    }

    /**
     * Refuses a write whose sender gave up on it a while ago: one that arrives more than max(1 s, peer timeout) later,
     * relative to its deadline, than the earliest of its connection's requests did (so the two nodes' wall clocks
     * need not agree). It is not run, and the sender, having timed out, has already answered that it may have run.
     * Safety does not rest on this (replicated states carry versions, ADR 0005); it keeps a forwarded write from
     * taking effect long after its client was answered.
     */
    private static void refuseLate(ClusterNode node, Session s, RespCommand c) {
        long grace = Math.max(1_000, node.settings().peerTimeout().toMillis());
        PeerStamp stamp = PeerStamp.parse(c.bytes(1));
        long now = System.currentTimeMillis();
        long sinceDeadline = stamp.lateMillis(now, 0);
        if (!stamp.hasDeadline()) {
            return;
        }
        // Measured against the earliest this connection's requests have arrived relative to their deadlines, not
        // against the clocks agreeing: a sender whose wall clock is minutes off is not late for that. A request held
        // back by the network (a partition healing) arrives later than the connection's best by the time it waited.
        // A stamp more than an hour off either way is not a clock offset we absorb: it is judged on the clocks alone
        // (so a deadline in 1970 is refused) and sets no baseline (so it cannot make later requests look late).
        long late;
        if (Math.abs(sinceDeadline) <= 3_600_000L) {
            s.peerDelayBaseline = Math.min(s.peerDelayBaseline, sinceDeadline);
            late = sinceDeadline - s.peerDelayBaseline - grace;
        } else {
            late = sinceDeadline == Long.MIN_VALUE ? sinceDeadline : sinceDeadline - grace;
        }
        if (late > 0) {
            node.counters.lateRequests().increment();
            throw new TryAgainException("request arrived " + late + " ms after its sender gave up; not run");
        }
    }

    /**
     * KVT.FWD epoch[:deadline] command args...: runs the command here as its slot's primary, never forwarding again,
     * and not after its sender's deadline: a forward delivered by TCP when a partition heals would otherwise overwrite
     * what was written since.
     */
    private static CompletableFuture<Void> fwd(Session s, RespCommand c, Reply r) {
        ClusterNode node = node(s);
        node.observe(epoch(c));
        refuseLate(node, s, c);
        budgetBySender(node, s, PeerStamp.parse(c.bytes(1)));
        int[] inner = new int[c.argCount() - 2];
        for (int i = 0; i < inner.length; i++) {
            inner[i] = i + 2;
        }
        RespCommand cmd = c.take(inner);
        try {
            boolean transaction = Args.lower(cmd.bytes(0)).equals(Transactions.FORWARDED);
            CommandSpec spec = transaction ? null : s.server.commands().lookup(cmd.bytes(0));
            if (!transaction && (spec == null || !ClusterRouter.routed(spec))) {
                throw new CommandException("ERR KVT.FWD of an unknown or unkeyed command");
            }
            if (!transaction && !spec.acceptsArgCount(cmd.argCount())) {
                throw new CommandException("ERR wrong number of arguments for '" + spec.name() + "' command");
            }
            ClusterNode.Topology t = node.topology();
            if (!t.serving() || t.table().epoch() < epoch(c)) {
                // Not yet (or no longer) serving, or behind the sender: the proxy retries shortly.
                throw new TryAgainException(t.self().id() + " is at epoch " + t.table().epoch()
                        + ", the request at " + epoch(c) + (t.serving() ? "" : "; not serving: " + t.downReason()));
            }
            if (transaction) {
                return Transactions.execForwarded(node, s, cmd, r);
            }
            int[] keys = ClusterRouter.keyIndexes(spec, cmd);
            for (int k : keys) {
                checkPrimary(t, cmd.bytes(k));
            }
            return Dispatcher.withKeysShared(s, Dispatcher.keysOf(spec, cmd), cmd, r,
                    own -> ClusterRouter.asPrimary(node, spec, s, own, r, keys));
        } finally {
            cmd.release();
        }
    }

    /**
     * Ends a forwarded command's budget (the peer timeout from its start, see {@link Session#commandStartNanos})
     * {@value #FWD_MARGIN_MILLIS} ms before its sender gives up, by the sender's deadline: a command that cannot have
     * its keys in time answers TRYAGAIN (not run) while the proxy still waits, rather than the proxy answering that it
     * may have run. Clamped to one peer timeout, for clocks that disagree.
     */
    private static void budgetBySender(ClusterNode node, Session s, PeerStamp stamp) {
        if (!stamp.hasDeadline()) {
            return;
        }
        long timeout = node.settings().peerTimeout().toMillis();
        long left = Math.clamp(stamp.deadline() - System.currentTimeMillis() - FWD_MARGIN_MILLIS, 0, timeout);
        s.commandStartNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(left - timeout);
    }

    /** A forwarded command whose key's slot this node is not the primary of did not run: the proxy retries. */
    static void checkPrimary(ClusterNode.Topology t, byte[] key) {
        int slot = SlotHash.slot(key);
        if (!t.table().isOwned() || !t.isSelf(t.table().primary(slot))) {
            throw new TryAgainException(t.self().id() + " is not the primary of slot " + slot
                    + " at epoch " + t.table().epoch());
        }
    }

    /**
     * KVT.REPL epoch[:deadline] version key expireAt value: a backup stores the primary's state of a key, unless it
     * has applied a newer version in the key's bucket ({@link StateVersions}).
     */
    private static CompletableFuture<Void> repl(Session s, RespCommand c, Reply r) {
        ClusterNode node = node(s);
        refuseStale(node, epoch(c));
        refuseLate(node, s, c);
        long version = Args.parseLong(c.bytes(2));
        byte[] key = c.bytes(3);
        long expireAt = Args.parseLong(c.bytes(4));
        RespCommand own = c.take(ClusterRouter.allIndexes(c)); // the caller releases c when this returns
        return underReplicaLock(s, new byte[][] {key}, version, r, own, i -> Values.put(own, 5, key,
                new PutOptions(expireAt, Condition.ALWAYS, false, false, version), s.server.store()));
    }

    /** KVT.RDEL epoch[:deadline] version key: a backup deletes a key its primary no longer has (versioned as REPL). */
    private static CompletableFuture<Void> rdel(Session s, RespCommand c, Reply r) {
        ClusterNode node = node(s);
        refuseStale(node, epoch(c));
        refuseLate(node, s, c);
        long version = Args.parseLong(c.bytes(2));
        byte[] key = c.bytes(3);
        return underReplicaLock(s, new byte[][] {key}, version, r, null, i -> s.server.store().remove(key, false));
    }

    /**
     * KVT.REPLM epoch[:deadline] version (key expireAt|- value)...: a backup applies the state of several keys
     * written by one command or transaction as one unit, under their replica locks; "-" is a key the primary no
     * longer has. (A READONLY read here does not take those locks: it may see the unit part-applied for the moment
     * this takes.)
     */
    private static CompletableFuture<Void> replm(Session s, RespCommand c, Reply r) {
        ClusterNode node = node(s);
        refuseStale(node, epoch(c));
        refuseLate(node, s, c);
        if ((c.argCount() - 3) % 3 != 0) {
            throw new CommandException("ERR KVT.REPLM takes key, expireAt and value triples");
        }
        long version = Args.parseLong(c.bytes(2));
        int n = (c.argCount() - 3) / 3;
        byte[][] keys = new byte[n][];
        long[] expireAt = new long[n];
        for (int i = 0; i < n; i++) {
            keys[i] = c.bytes(3 + 3 * i);
            byte[] e = c.bytes(4 + 3 * i);
            expireAt[i] = e.length == 1 && e[0] == '-' ? -1 : Args.parseLong(e);
        }
        RespCommand own = c.take(ClusterRouter.allIndexes(c)); // the caller releases c when this returns
        TieredStore store = s.server.store();
        // Not the key gate: a primary holds it while waiting for this reply, so a backup that waited for its own
        // gate could close a cycle between two nodes that back each other up.
        return underReplicaLock(s, keys, version, r, own, i -> expireAt[i] < 0 ? store.remove(keys[i], false)
                : Values.put(own, 5 + 3 * i, keys[i], new PutOptions(expireAt[i], Condition.ALWAYS, false, false,
                version),
                store));
    }

    /**
     * Applies a primary's state of {@code keys}, at {@code version}, under their replica locks: refused (STALEVERSION
     * with the newest version of their buckets, which the primary resends above) if a newer version was applied in one
     * of their buckets; else each key marked written first (an importing backup's transfer must not put an older copy
     * over it), {@code apply.apply(i)} for key i, and OK once all are applied. Releases {@code own}, if any, when done.
     */
    private static CompletableFuture<Void> underReplicaLock(Session s, byte[][] keys, long version, Reply r,
                                                            RespCommand own,
                                                            java.util.function.IntFunction<CompletableFuture<?>>
                                                                    apply) {
        ClusterNode node = node(s);
        StateVersions versions = s.server.replicator().versions();
        CompletableFuture<Void> done = node.replicaLocks().lock(keys).thenCompose(unlock -> {
            if (!versions.admit(keys, version)) {
                unlock.run();
                node.counters.lateRequests().increment();
                return CompletableFuture.failedFuture(new CommandException(Replicator.STALE_VERSION + " "
                        + versions.newest(keys) + " state version " + version + " is older than one applied here"
                        + " (a later write, or one of a key sharing its bucket); resend with a newer version"));
            }
            versions.observe(version); // this node's own versions, should it become primary, start above it
            CompletableFuture<?>[] applied = new CompletableFuture<?>[keys.length];
            for (int i = 0; i < keys.length; i++) {
                try {
                    node.wroteLocally(keys[i]);
                    applied[i] = apply.apply(i);
                } catch (RuntimeException e) {
                    applied[i] = CompletableFuture.failedFuture(e);
                }
            }
            return CompletableFuture.allOf(applied).whenComplete((v, e) -> unlock.run());
        });
        if (own != null) {
            done = done.whenComplete((v, e) -> own.release());
        }
        return Async.then(done, r, v -> {
            r.ok();
            return null;
        });
    }

    /**
     * Refuses a replication from another epoch than this node's: an older one (-STALE: its sender missed a table
     * change), or a newer one this node has not installed yet (-TRYAGAIN, its sender retries): installing it may drop
     * the keys' slot here (an owner again after a break purges its leftovers, one included again drops everything),
     * and a state applied just before would be lost although acknowledged.
     */
    private static void refuseStale(ClusterNode node, long epoch) {
        long mine = node.topology().table().epoch();
        if (epoch < mine) {
            throw new CommandException("STALE epoch " + epoch + " is older than this node's " + mine);
        }
        node.observe(epoch);
        if (epoch > mine) {
            throw new TryAgainException(node.topology().self().id() + " has not installed epoch " + epoch
                    + " yet (it is at " + mine + "); retry");
        }
    }

    /**
     * KVT.PEEK epoch key [META]: [lastComplete stamp of the key's slot here, expireAt (0 none, -2 absent), cluster
     * version of the value (0 when absent), value (META: its length; nil when absent)]. Read under the key's lock, so
     * never half-way through a write; the stamp is read after the value.
     */
    private static CompletableFuture<Void> peek(Session s, RespCommand c, Reply r) {
        ClusterNode node = node(s);
        node.observe(epoch(c));
        byte[] key = c.bytes(2);
        boolean meta = c.argCount() > 3 && Args.lower(c.bytes(3)).equals("meta");
        CompletableFuture<Runnable> locked = node.locks().lock(key);
        return Async.then(locked, r, unlock -> {
            ValueRef ref = s.server.store().get(key);
            // After the value: a node dropping its copy zeroes the stamp before deleting the keys, so a stamp still
            // set means the value above came from the copy it stamps.
            long complete = node.lastComplete(SlotHash.slot(key));
            r.array(4);
            r.integer(complete);
            if (ref == null) {
                unlock.run();
                r.integer(-2);
                r.integer(0);
                r.nil();
                return null;
            }
            r.integer(ref.expireAt());
            r.integer(ref.version());
            if (meta) {
                r.integer(ref.length());
                ref.close();
                unlock.run();
                return null;
            }
            return Async.andFinally(() -> Values.write(s.server.diskReads(), ref, r), unlock);
        });
    }

    /**
     * KVT.SLOTKEYS epoch cursor count bitmap [VERSIONS]: keys here in the slots the 2048-byte bitmap names,
     * SCAN-style: [next cursor, key...], or with VERSIONS [next cursor, key, cluster version, expireAt, ...] (what an
     * importer compares with its own copy).
     */
    private static CompletableFuture<Void> slotKeys(Session s, RespCommand c, Reply r) {
        ClusterNode node = node(s);
        node.observe(epoch(c));
        long cursor = Args.parseLong(c.bytes(2));
        int count = (int) Math.min(10_000, Math.max(1, Args.parseLong(c.bytes(3))));
        byte[] bitmap = c.bytes(4);
        if (bitmap.length != SlotHash.SLOTS / 8) {
            throw new CommandException("ERR slot bitmap of " + bitmap.length + " bytes, expected "
                    + SlotHash.SLOTS / 8);
        }
        boolean versions = c.argCount() > 5 && Args.lower(c.bytes(5)).equals("versions");
        TieredStore store = s.server.store();
        if (versions) {
            CompletableFuture<VersionPage> page = KeyspaceWalker.walk(() -> versionPage(store, cursor, count,
                    bitmap));
            return Async.then(page, r, p -> {
                r.array(3 * p.keys().size() + 1);
                r.bulk(Long.toString(p.next()));
                for (int i = 0; i < p.keys().size(); i++) {
                    r.bulk(p.keys().get(i));
                    r.integer(p.meta().get(i)[0]);
                    r.integer(p.meta().get(i)[1]);
                }
                return null;
            });
        }
        CompletableFuture<KeyspaceCommands.ScanPage> page = KeyspaceWalker.walk(() -> slotPage(store, cursor, count,
                bitmap));
        return Async.then(page, r, p -> {
            r.array(p.keys().size() + 1);
            r.bulk(Long.toString(p.next()));
            return KeyspaceWalker.writeKeys(r, p.keys());
        });
    }

    /** One page of KVT.SLOTKEYS ... VERSIONS: the keys, each with its value's [cluster version, expireAt]. */
    private record VersionPage(long next, List<byte[]> keys, List<long[]> meta) {
    }

    /** As {@link #slotPage}, with each key's cluster version and expiry. Runs on a walker thread. */
    private static VersionPage versionPage(TieredStore store, long cursor, int count, byte[] bitmap) {
        List<byte[]> keys = new java.util.ArrayList<>();
        List<long[]> meta = new java.util.ArrayList<>();
        if (cursor < 0 || cursor >= TieredStore.SCAN_BUCKETS) {
            return new VersionPage(0, keys, meta);
        }
        int bucket = (int) cursor;
        long visited = 0;
        while (bucket < TieredStore.SCAN_BUCKETS && keys.size() < count && visited < count * 64L) {
            visited += store.versionsInBucket(bucket++, (key, version, expireAt, length) -> {
                if (ClusterNode.inBitmap(bitmap, SlotHash.slot(key))) {
                    keys.add(key);
                    meta.add(new long[] {version, expireAt});
                }
            });
        }
        return new VersionPage(bucket == TieredStore.SCAN_BUCKETS ? 0 : bucket, keys, meta);
    }

    /**
     * Whole scan buckets from {@code cursor} until {@code count} keys of the bitmap's slots were found or 64 times
     * that many examined; the next cursor is the next bucket (0: done), stateless as SCAN's. Runs on a walker thread.
     */
    private static KeyspaceCommands.ScanPage slotPage(TieredStore store, long cursor, int count, byte[] bitmap) {
        List<byte[]> out = new java.util.ArrayList<>();
        if (cursor < 0 || cursor >= TieredStore.SCAN_BUCKETS) {
            return new KeyspaceCommands.ScanPage(0, out);
        }
        int bucket = (int) cursor;
        long visited = 0;
        while (bucket < TieredStore.SCAN_BUCKETS && out.size() < count && visited < count * 64L) {
            visited += store.scanBucket(bucket++, key -> {
                if (ClusterNode.inBitmap(bitmap, SlotHash.slot(key))) {
                    out.add(key);
                }
            });
        }
        return new KeyspaceCommands.ScanPage(bucket == TieredStore.SCAN_BUCKETS ? 0 : bucket, out);
    }

    /** KVT.SLOTINFO epoch: lastComplete of every slot here, 16384 big-endian longs, then the trusted flag. */
    private static CompletableFuture<Void> slotInfo(Session s, RespCommand c, Reply r) {
        ClusterNode node = node(s);
        node.observe(epoch(c));
        r.bulk(node.slotInfo());
        return null;
    }

    /** KVT.FLUSH epoch: deletes every key here (one node's part of a cluster-wide FLUSHALL). */
    private static CompletableFuture<Void> flush(Session s, RespCommand c, Reply r) {
        node(s);
        return Async.then(s.server.store().clear(), r, v -> {
            r.ok();
            return null;
        });
    }
}
