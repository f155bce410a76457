package io.kvtier.cluster.node;

import io.kvtier.client.ClientOptions;
import io.kvtier.client.ClientResources;
import io.kvtier.client.PeerPool;
import io.kvtier.client.Reply;
import io.kvtier.client.cluster.SlotHash;
import io.kvtier.cluster.Member;
import io.kvtier.cluster.SlotTable;
import io.kvtier.cluster.topology.SlotTableService;
import io.kvtier.store.PutOptions;
import io.kvtier.store.PutOptions.Condition;
import io.kvtier.store.TieredStore;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * How a node serves its share of the cluster (issue 4). The cluster module decides *where* (epoch-numbered slot tables
 * from the coordinator); this class keeps the node's per-slot state and the rules that keep data correct while slots
 * move:
 *
 * - Slot states. NONE (not an owner), IMPORTING (an owner that does not hold all of the slot's data yet), COMPLETE.
 *   lastComplete[slot] stamps the newest table in which this node was a complete owner of the slot: its epoch, and
 *   the table's fingerprint below it (stamp()), since the two sides of a partition can each publish a table of the
 *   same epoch. Between nodes, the holder with the highest lastComplete has the freshest copy: every write after that
 *   epoch went to the newer owners.
 *   That is how an importer picks its source, with no history of earlier tables (a joiner has none).
 * - Import. An owner that is IMPORTING first fetches, on demand, every key a command touches (ensureLocal), then runs
 *   the command locally; a background Importer copies the rest of the slot from the freshest holder, throttled
 *   (--rebalance-rate), one value in flight per source, then makes a second pass after the peer timeout to catch
 *   writes that were in flight on the old owner. Fetches are put-if-absent under the key's lock and skip keys written
 *   or deleted here meanwhile (tombstones: written, since a value written here may expire and be absent again), so a
 *   newer local write or delete always wins over the transferred copy. Tombstones live only while their slot imports.
 *   On a backup, replication (KVT.REPL/RDEL) and transferred puts exclude each other through replicaLocks, local
 *   locks apart from the write locks: a backup's replication handler waiting on a write lock that a local write holds
 *   while it replicates to the other node could close a cycle across two nodes.
 * - Old owners. A peer request carrying a higher epoch than the one installed (observedEpoch) makes this node refuse
 *   writes as primary (TRYAGAIN) until it installs that epoch: an old primary cannot acknowledge a write the new owner
 *   has already scanned past. Writes hold their keys' locks while applying and replicating; a transfer read takes the
 *   key's lock too.
 * - Trust. A node that was away may hold values overwritten or deleted meanwhile. A fresh process (joining, or
 *   restarted) drops its local data and imports what it owns; the first node of a new cluster keeps its data. A node
 *   in a minority (not more than half of the last view it served in) stops serving keys (CLUSTERDOWN); so does a node
 *   whose own process was paused (SIGSTOP, a long GC) for half the failure timeout or more, until a new table arrives
 *   or twice the failure timeout passes: the others may have moved on without it. When such a node serves again it
 *   keeps each slot no other member has a newer complete copy of (lastComplete, asked with KVT.SLOTINFO), nor one
 *   from another table of the same epoch, and drops the rest (distrust): the survivor of a two-node cluster keeps its
 *   data when its peer comes back; a node that briefly served a table its peers never installed (it saw one of them
 *   leave before it lost the other) does not keep what it held then.
 * - Merges. A node whose last serving members are no more than half of a new table asks the newcomers (KVT.SLOTINFO)
 *   and drops the slots one of them holds a newer copy of (yieldToNewcomers). Fresh joiners hold none. But a joiner
 *   whose seeds did not answer within the join timeout founds a cluster of its own, complete for every slot and empty;
 *   when MERGE3 merges it with the running cluster, keeping those slots would answer nil for their keys.
 * - Writes re-read the topology once they hold their keys' locks: a write that waited while a newer table arrived, or
 *   while a new owner announced itself (observedEpoch), has not run and answers TRYAGAIN. A write that fails still
 *   replicates its keys' state, since it may have changed one before failing.
 */

/**
 * This node's part in a cluster: membership and slot tables, per-slot ownership state, peer connections, state
 * transfer and replication. Thread-safe; topology changes arrive on the slot-table thread, commands on event loops.
 */
public final class ClusterNode implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ClusterNode.class);
    /** How many SLOTINFO timeouts a merging node waits for a newcomer's answer (see yieldToNewcomers). */
    private static final int NEWCOMER_ATTEMPTS = 5;
    /** Pipelined connections to each peer per lane. */
    private static final int CONNECTIONS_PER_LANE = 4;

    /** What routing needs, replaced as a whole on every table install. */
    public record Topology(SlotTable table, Member self, boolean serving, String downReason) {
        public boolean isSelf(Member m) {
            return m != null && m.id().equals(self.id());
        }
    }

    private final ClusterSettings settings;
    private final TieredStore store;
    private final ClientResources clientResources;
    /** One pool per lane, so that no request waits in a connection behind one that waits for it (see Lane). */
    private final java.util.EnumMap<Lane, PeerPool> lanes = new java.util.EnumMap<>(Lane.class);
    private final KeyLocks locks = new KeyLocks();
    private final SlotStates state = new SlotStates();
    private final AtomicLongArray lastComplete = new AtomicLongArray(SlotHash.SLOTS);
    /** Keys written or deleted here while their slot was importing; a transferred copy must not overwrite them. */
    final ConcurrentHashMap<ByteKey, Boolean> tombstones = new ConcurrentHashMap<>();
    /** Taken by KVT.REPL/RDEL and transferred puts (after the write locks), never across a remote call. */
    private final KeyLocks replicaLocks = new KeyLocks();
    private final AtomicLong observedEpoch = new AtomicLong();
    private final Importer importer;
    private final Thread pauseWatch;
    private volatile Topology topology;
    private volatile long fencedUntilNanos;
    private volatile boolean closed;
    private SlotTableService tables;
    // Slot-table thread only:
    private List<Member> lastServing = List.of();
    private volatile boolean trusted; // written on the slot-table thread, read by KVT.SLOTINFO
    private boolean first = true;
    /** Set by the pause watcher: this node was away; its data may be stale. */
    private volatile boolean rejoining;
    /** Set once this node first serves a slot table; until then clients are answered -LOADING. */
    private volatile boolean joined;

    /** This node's cluster counters since start. */
    public final ClusterCounters counters = new ClusterCounters();
    /** Replication sent to backups and not acknowledged yet: the replication lag. */
    public final ReplicationBacklog replicationBacklog = new ReplicationBacklog();
    /** The importer's progress through the slots this node took over (rebalancing). */
    public final ImportProgress importProgress = new ImportProgress(counters.fetchedKeys(), counters.fetchedBytes());

    private ClusterNode(ClusterSettings settings, TieredStore store, String password,
                        java.util.function.Supplier<io.netty.handler.ssl.SslContext> peerTls) {
        this.settings = settings;
        this.store = store;
        this.clientResources = ClientResources.create(1);
        ClientOptions options = new ClientOptions(settings.peerTimeout(), settings.peerTimeout());
        for (Lane lane : Lane.values()) {
            lanes.put(lane, PeerPool.create(clientResources, options, CONNECTIONS_PER_LANE, password, peerTls));
        }
        Member self = new Member(settings.membership().nodeId(), settings.membership().weight(),
                settings.membership().endpoint());
        this.topology = new Topology(io.kvtier.cluster.Placement.compute(0, List.of(), 0), self, false, "this node has not joined its cluster yet");
        this.importer = new Importer(this);
        this.pauseWatch = Thread.ofPlatform().name("kvtier-pause-watch").daemon().unstarted(this::watchPauses);
    }

    /**
     * A node of the cluster {@code settings} describe, not joined yet (it answers peers with TRYAGAIN). Every node of
     * a cluster has the same {@code password} (--requirepass, null for none): it authenticates the node's peer
     * connections. {@code peerTls} (--tls-cluster; null: plain) gives the TLS context of each new peer connection,
     * read at every connect so that reloaded certificates apply to the connections opened after the reload.
     */
    public static ClusterNode create(ClusterSettings settings, TieredStore store, String password,
                                     java.util.function.Supplier<io.netty.handler.ssl.SslContext> peerTls) {
        return new ClusterNode(settings, store, password, peerTls);
    }

    /** Joins the cluster; the first slot table may still be on its way when this returns. */
    public void join() throws IOException {
        try {
            tables = SlotTableService.start(settings.membership(), settings.replicas(), this::install);
        } catch (IOException | RuntimeException e) {
            lanes.values().forEach(PeerPool::close);
            clientResources.close();
            throw e;
        }
        importer.start();
        pauseWatch.start();
    }

    public ClusterSettings settings() {
        return settings;
    }

    public TieredStore store() {
        return store;
    }

    public KeyLocks locks() {
        return locks;
    }

    /** The locks of a backup's replication handlers; see the essay. */
    public KeyLocks replicaLocks() {
        return replicaLocks;
    }

    /** The current topology, with {@code serving} false while fenced after a pause. */
    public Topology topology() {
        Topology t = topology;
        if (t.serving() && fencedUntilNanos != 0 && System.nanoTime() < fencedUntilNanos) {
            return new Topology(t.table(), t.self(), false, "this node was paused and may have been replaced; "
                    + "waiting for the cluster");
        }
        return t;
    }

    /** Whether this node holds all of {@code slot}'s data as one of its owners. */
    public boolean complete(int slot) {
        return state.get(slot) == SlotState.COMPLETE;
    }

    public boolean importing(int slot) {
        return state.get(slot) == SlotState.IMPORTING;
    }

    public long lastComplete(int slot) {
        return lastComplete.get(slot);
    }

    public int importingSlots() {
        return state.count(SlotState.IMPORTING);
    }

    /** Remembers an epoch a peer spoke of; a higher one than installed makes this node refuse writes until it has it. */
    public void observe(long epoch) {
        observedEpoch.accumulateAndGet(epoch, Math::max);
    }

    /** Whether writes as primary must wait: a peer has already acted on a newer table than this node's. */
    public boolean behind() {
        return observedEpoch.get() > topology.table().epoch();
    }

    public InetSocketAddress address(Member m) {
        return new InetSocketAddress(m.host(), m.port());
    }

    /** Records that {@code key} was written or deleted here, if its slot is importing (see tombstones). */
    public void wroteLocally(byte[] key) {
        if (importing(SlotHash.slot(key))) {
            tombstones.put(new ByteKey(key), Boolean.TRUE);
        }
    }

    /**
     * Makes sure each of {@code keys} whose slot is importing is here if the freshest holder has it: fetched and put
     * if absent (unless deleted here meanwhile). Completes when all are settled; fails if no holder could be asked.
     */
    public CompletableFuture<Void> ensureLocal(byte[]... keys) {
        List<CompletableFuture<Void>> pending = null;
        for (byte[] key : keys) {
            if (importing(SlotHash.slot(key)) && !store.exists(key) && !tombstones.containsKey(new ByteKey(key))) {
                if (pending == null) {
                    pending = new ArrayList<>();
                }
                pending.add(importer.fetch(key, null));
            }
        }
        return pending == null ? null : CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new));
    }

    void fetched(long bytes) {
        counters.fetchedKeys().increment();
        counters.fetchedBytes().add(bytes);
    }

    /** Marks {@code slots} complete if the topology is still at {@code epoch}; called by the importer. */
    void completed(java.util.BitSet slots, long epoch) {
        synchronized (this) {
            if (topology.table().epoch() != epoch) {
                return;
            }
            for (int s = slots.nextSetBit(0); s >= 0; s = slots.nextSetBit(s + 1)) {
                if (state.moveIf(s, SlotState.IMPORTING, SlotState.COMPLETE)) {
                    lastComplete.set(s, stamp(topology.table()));
                }
            }
            tombstones.keySet().removeIf(k -> !importing(SlotHash.slot(k.bytes())));
        }
        log.info("{}: {} slots imported at epoch {}; {} still importing", topology.self().id(), slots.cardinality(),
                epoch, importingSlots());
    }

    /** Slots this node is importing, for the importer. */
    java.util.BitSet importingSet() {
        return state.slotsIn(SlotState.IMPORTING);
    }

    /** {@code slots} as the 2048-byte bitmap KVT.SLOTKEYS takes (bit s of byte s / 8). */
    public static byte[] toBitmap(java.util.BitSet slots) {
        byte[] out = new byte[SlotHash.SLOTS / 8];
        for (int s = slots.nextSetBit(0); s >= 0; s = slots.nextSetBit(s + 1)) {
            out[s >> 3] |= (byte) (1 << (s & 7));
        }
        return out;
    }

    /** Whether {@code slot} is set in a {@link #toBitmap} bitmap. */
    public static boolean inBitmap(byte[] bitmap, int slot) {
        return (bitmap[slot >> 3] & (1 << (slot & 7))) != 0;
    }

    /**
     * The first argument of a peer write: {@code epoch:deadline}, the deadline (epoch millis) being when its sender
     * stops waiting, {@code timeoutMillis} from now. The receiver refuses it at another epoch or well after that.
     */
    public static String requestEpoch(long epoch, long timeoutMillis) {
        return epoch + ":" + (System.currentTimeMillis() + Math.max(0, timeoutMillis));
    }

    /** lastComplete's stamp for {@code table}: its epoch in the high 32 bits, its fingerprint in the low 32. */
    static long stamp(SlotTable table) {
        return table.epoch() << 32 | table.fingerprint() & 0xffffffffL;
    }

    static long epochOf(long stamp) {
        return stamp >>> 32;
    }

    /**
     * lastComplete of every slot, 8 bytes each, big-endian, then 1 if this node serves trusted data (0 while it is in
     * a minority or rejoining): what KVT.SLOTINFO answers.
     */
    public byte[] slotInfo() {
        ByteBuffer out = ByteBuffer.allocate((SlotHash.SLOTS + 1) * Long.BYTES);
        for (int s = 0; s < SlotHash.SLOTS; s++) {
            out.putLong(lastComplete.get(s));
        }
        Topology t = topology;
        out.putLong(trusted && !rejoining && t.serving() ? 1 : 0); // whether the stamps above are current
        return out.array();
    }

    // ---- table installation (slot-table thread) ----

    /**
     * Serves {@code table}: in a minority, stops serving keys; otherwise drops what may be stale, moves every slot to
     * its new state, and publishes the topology.
     */
    private void install(SlotTable table) {
        Member self = topology.self();
        boolean present = table.members().stream().anyMatch(m -> m.id().equals(self.id()));
        Set<String> now = new HashSet<>();
        table.members().forEach(m -> now.add(m.id()));
        long kept = lastServing.stream().filter(m -> now.contains(m.id())).count();
        boolean majority = present && (lastServing.isEmpty() || kept * 2 > lastServing.size());
        if (!majority) {
            stopServing(table, present, kept);
            return;
        }
        if (first) {
            trusted = table.members().size() == 1; // the founder of a new cluster keeps its data
            first = false;
        }
        if (rejoining) {
            trusted = false;
            rejoining = false;
        }
        BitSet dropped = dropUntrusted(table, kept);
        boolean founding = table.members().size() == 1 && topology.table().epoch() == 0;
        int importing;
        synchronized (this) {
            importing = moveSlots(table, founding, dropped);
            lastServing = table.members();
            topology = new Topology(table, table.members().stream().filter(m -> m.id().equals(self.id()))
                    .findFirst().orElse(self), true, null);
            joined = true;
            if (!rejoining) {
                fencedUntilNanos = 0;
            }
        }
        log.info("{}: serving epoch {} over {} members: {} slots primary, {} owned, {} importing", self.id(),
                table.epoch(), table.members().size(), table.primaryCount(self), table.ownedCount(self), importing);
        importer.forgetHolders();
        importer.wake();
    }

    /** A table in which this node is in a minority (or absent): it owns nothing and refuses keys until it rejoins. */
    private void stopServing(SlotTable table, boolean present, long kept) {
        Member self = topology.self();
        synchronized (this) {
            for (int s = 0; s < SlotHash.SLOTS; s++) {
                state.move(s, SlotState.NONE);
            }
            trusted = false;
            topology = new Topology(table, self, false, "this node sees " + table.members().size() + " of the "
                    + lastServing.size() + " members it last served with (a minority): it refuses keys until it"
                    + " rejoins the majority" + (present ? "" : " (it is not in this table)"));
        }
        log.warn("{}: in a minority at epoch {} ({} of {} members); not serving keys", self.id(), table.epoch(),
                kept, lastServing.size());
    }

    /**
     * Drops local keys that may be stale before serving {@code table}: everything doubtful after joining, a pause or a
     * minority spell ({@link #distrust}); what newcomers hold newer copies of when they outnumber the members this
     * node served with ({@link #yieldToNewcomers}). Returns the slots whose keys were dropped: whatever they hold
     * already came with this table (replication from primaries that installed it first), so they are not purged again.
     */
    private BitSet dropUntrusted(SlotTable table, long kept) {
        BitSet dropped = new BitSet(SlotHash.SLOTS);
        if (!trusted) {
            dropped = distrust(table);
            trusted = true;
        } else if (!lastServing.isEmpty() && kept * 2 <= table.members().size()) {
            trusted = false; // while its stamps may still go (KVT.SLOTINFO)
            dropped = yieldToNewcomers(table);
            trusted = true;
        }
        return dropped;
    }

    /**
     * Moves every slot to its state under {@code table}: not an owner, NONE; an owner already complete (or alone),
     * COMPLETE; otherwise IMPORTING, purging leftovers of an earlier ownership first. Returns how many import.
     */
    private int moveSlots(SlotTable table, boolean founding, BitSet dropped) {
        Member self = topology.self();
        BitSet purge = new BitSet(SlotHash.SLOTS);
        int importing = 0;
        for (int s = 0; s < SlotHash.SLOTS; s++) {
            boolean owner = table.owners(s).stream().anyMatch(m -> m.id().equals(self.id()));
            SlotState old = state.get(s);
            SlotState next;
            if (!owner) {
                next = SlotState.NONE;
            } else if (old == SlotState.COMPLETE || founding || table.members().size() == 1) {
                next = SlotState.COMPLETE; // alone, nobody else can hold newer data
            } else {
                next = SlotState.IMPORTING;
                if (old == SlotState.NONE) {
                    purge.set(s, !dropped.get(s)); // leftovers from an earlier ownership: stale
                }
            }
            if (next == SlotState.COMPLETE) {
                lastComplete.set(s, stamp(table));
            }
            if (next == SlotState.IMPORTING) {
                importing++;
            }
            state.move(s, next);
        }
        purgeSlots(purge);
        // A tombstone speaks only for the import it was made in: keep none past it, nor into a new ownership.
        tombstones.keySet().removeIf(k -> {
            int slot = SlotHash.slot(k.bytes());
            return !importing(slot) || purge.get(slot);
        });
        return importing;
    }

    /**
     * Drops what this node holds that may be stale, before it serves again after joining, a minority spell or a pause.
     * Per slot, a copy is kept if this node held the slot completely at an epoch no other member has a newer complete
     * copy from (the other side of a partition that kept writing has one; a two-node cluster's restarted peer has
     * none): so the survivor of a two-node cluster keeps its data when its peer comes back. A fresh process knows no
     * such epochs, and a silent member may hold newer copies of anything: then everything goes. Returns the slots
     * whose keys were dropped.
     */
    private BitSet distrust(SlotTable table) {
        Member self = topology.self();
        BitSet stale = staleSlots(table);
        if (stale == null) {
            log.info("{}: joining a running cluster at epoch {}: dropping {} local keys (they may be stale) and "
                    + "importing this node's slots", self.id(), table.epoch(), store.size());
            store.clear().join();
            tombstones.clear();
            for (int s = 0; s < SlotHash.SLOTS; s++) {
                state.move(s, SlotState.NONE);
                lastComplete.set(s, 0);
            }
            BitSet all = new BitSet(SlotHash.SLOTS);
            all.set(0, SlotHash.SLOTS);
            return all;
        }
        purgeSlots(stale);
        tombstones.clear();
        for (int s = 0; s < SlotHash.SLOTS; s++) {
            if (stale.get(s)) {
                state.move(s, SlotState.NONE);
                lastComplete.set(s, 0);
            } else {
                state.move(s, SlotState.COMPLETE); // install() keeps it only where this node still owns the slot
            }
        }
        log.info("{}: rejoining at epoch {}: kept {} slots no other member has newer copies of, dropped the keys of"
                + " {} slots (they may be stale)", self.id(), table.epoch(), SlotHash.SLOTS - stale.cardinality(),
                stale.cardinality());
        return stale;
    }

    /**
     * Slots whose local copy may be stale: never complete here, or complete at a newer epoch on another member of
     * {@code table}. Null when that cannot be told: this node never held a slot completely, or a member did not
     * answer KVT.SLOTINFO.
     */
    private BitSet staleSlots(SlotTable table) {
        boolean any = false;
        for (int s = 0; s < SlotHash.SLOTS && !any; s++) {
            any = lastComplete.get(s) > 0;
        }
        if (!any) {
            return null;
        }
        List<long[]> answers = new ArrayList<>();
        for (Member m : table.members()) {
            if (m.id().equals(topology.self().id())) {
                continue;
            }
            long[] info = importer.slotInfo(m, table.epoch());
            if (info == null) {
                return null;
            }
            answers.add(info);
        }
        BitSet stale = new BitSet(SlotHash.SLOTS);
        for (int s = 0; s < SlotHash.SLOTS; s++) {
            stale.set(s, isStale(s, lastComplete.get(s), answers));
        }
        return stale;
    }

    /**
     * Whether this (rejoining) node's copy of {@code slot}, stamped {@code mine}, must go, given the other members'
     * SLOTINFO {@code answers} (stamps, then 1 if that member serves trusted data). It goes if another member has a
     * newer epoch, or the same epoch from a member that never left (a pause or a partition of this node's own: what
     * the others hold is current). If every holder of this epoch is rejoining too, the stamp most of them hold keeps
     * (the larger on a tie): a table of one epoch on each side of a partition yields to the side with more holders,
     * and identical stamps (a two-node cluster back from a pause) all keep.
     */
    static boolean isStale(int slot, long mine, List<long[]> answers) {
        if (mine == 0) {
            return true;
        }
        Map<Long, Integer> holders = new HashMap<>();
        holders.put(mine, 1);
        for (long[] info : answers) {
            long theirs = info[slot];
            if (epochOf(theirs) > epochOf(mine)) {
                return true;
            }
            if (theirs != 0 && epochOf(theirs) == epochOf(mine)) {
                if (info[SlotHash.SLOTS] != 0) {
                    return true;
                }
                holders.merge(theirs, 1, Integer::sum);
            }
        }
        long winner = mine;
        for (Map.Entry<Long, Integer> e : holders.entrySet()) {
            int best = holders.get(winner);
            if (e.getValue() > best || e.getValue() == best && e.getKey() > winner) {
                winner = e.getKey();
            }
        }
        return winner != mine;
    }

    /**
     * Drops the slots a newcomer to {@code table} holds a newer complete copy of, before this node serves the table.
     * Called when the members this node last served with are no more than half of {@code table}: either fresh nodes
     * joined (they hold no stamps, and nothing goes), or this node's cluster merged with another one that served on
     * its own. A joiner whose seeds did not answer within the join timeout founds such a cluster (JGroups makes it a
     * singleton), complete for every slot and empty; kept, its slots would read nil once the clusters merge. Per slot,
     * the higher stamp keeps (see {@link #outranked}), so two merging sides never both drop a slot. A newcomer is asked
     * again while it stays in the view, up to NEWCOMER_ATTEMPTS times the SLOTINFO timeout. If one never answers, a
     * node without keys (a founder that never served a write, as that joiner) drops every slot, which loses nothing;
     * a node with keys takes the silent newcomer for a fresh one, since dropping them would lose a lone node's data
     * whenever its first joiner is slow or dies. Blocks the slot-table thread meanwhile; the node serves its previous
     * table. Returns the dropped slots.
     */
    private BitSet yieldToNewcomers(SlotTable table) {
        Member self = topology.self();
        Set<String> before = new HashSet<>();
        lastServing.forEach(m -> before.add(m.id()));
        List<Member> unanswered = new ArrayList<>(table.members().stream()
                .filter(m -> !before.contains(m.id()) && !m.id().equals(self.id())).toList());
        List<long[]> answers = new ArrayList<>();
        long deadline = System.nanoTime() + NEWCOMER_ATTEMPTS * 2 * settings.peerTimeout().toNanos();
        while (!unanswered.isEmpty() && !closed && !Thread.currentThread().isInterrupted()) {
            for (java.util.Iterator<Member> it = unanswered.iterator(); it.hasNext(); ) {
                long[] info = importer.slotInfo(it.next(), table.epoch());
                if (info != null) {
                    answers.add(info);
                    it.remove();
                }
            }
            List<Member> view = tables == null ? table.members() : tables.membership().members();
            unanswered.removeIf(m -> view.stream().noneMatch(v -> v.id().equals(m.id()))); // gone: nothing to yield to
            if (unanswered.isEmpty() || System.nanoTime() > deadline) {
                break;
            }
            sleepQuietly(200);
        }
        BitSet stale = new BitSet(SlotHash.SLOTS);
        if (!unanswered.isEmpty() && store.size() == 0) {
            log.warn("{}: newcomers {} did not answer KVT.SLOTINFO at epoch {}; holding no keys, this node imports "
                    + "all its slots", self.id(), unanswered.stream().map(Member::id).toList(), table.epoch());
            stale.set(0, SlotHash.SLOTS); // nothing to lose, and its "complete" slots may be empty copies
        } else {
            if (!unanswered.isEmpty()) {
                log.warn("{}: newcomers {} did not answer KVT.SLOTINFO at epoch {}; taking them for fresh nodes",
                        self.id(), unanswered.stream().map(Member::id).toList(), table.epoch());
            }
            for (int s = 0; s < SlotHash.SLOTS; s++) {
                stale.set(s, outranked(s, lastComplete.get(s), answers));
            }
        }
        if (stale.isEmpty()) {
            return stale;
        }
        // Still the previous table's primary of these slots, and COMPLETE: no key of theirs is read here until
        // install() serves the new table, where they import.
        topology = new Topology(topology.table(), self, false, "merging with members that served without this "
                + "node; it imports the slots they hold newer copies of");
        purgeSlots(stale);
        for (int s = stale.nextSetBit(0); s >= 0; s = stale.nextSetBit(s + 1)) {
            state.move(s, SlotState.NONE);
            lastComplete.set(s, 0);
        }
        tombstones.keySet().removeIf(k -> stale.get(SlotHash.slot(k.bytes())));
        log.info("{}: merged at epoch {} with members that served without it: dropped the keys of {} slots they "
                + "hold newer copies of", self.id(), table.epoch(), stale.cardinality());
        return stale;
    }

    /**
     * Whether a newcomer's SLOTINFO {@code answers} hold a newer complete copy of {@code slot} than this node's,
     * stamped {@code mine} (0: none): a higher stamp, i.e. a newer epoch, or on one epoch the higher fingerprint, an
     * arbitrary but agreed order between two clusters that each published that epoch. A fresh joiner (stamps 0)
     * outranks nothing; identical stamps (one table) outrank each other neither.
     */
    static boolean outranked(int slot, long mine, List<long[]> answers) {
        for (long[] info : answers) {
            if (Long.compareUnsigned(info[slot], mine) > 0) {
                return true;
            }
        }
        return false;
    }

    private static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Deletes local keys of {@code slots} (stale copies from an earlier ownership) before serving them again. */
    private void purgeSlots(BitSet slots) {
        if (slots.isEmpty()) {
            return;
        }
        List<CompletableFuture<?>> removals = new ArrayList<>();
        store.forEachKey(key -> {
            if (slots.get(SlotHash.slot(key))) {
                removals.add(store.remove(key, false));
            }
        });
        CompletableFuture.allOf(removals.toArray(CompletableFuture[]::new)).join();
        if (!removals.isEmpty()) {
            log.info("{}: dropped {} stale keys of {} slots it owns again", topology.self().id(), removals.size(),
                    slots.cardinality());
        }
    }

    /** Members to ask for a slot's data: everyone else in the table. */
    List<Member> others() {
        Topology t = topology;
        return t.table().members().stream().filter(m -> !t.isSelf(m) && !m.endpoint().isEmpty()).toList();
    }

    long epoch() {
        return topology.table().epoch();
    }

    /**
     * Puts a transferred value if the key is still absent and was not written or deleted here; under the key's write
     * lock (against local writes) and its replica lock (against replication from the primary).
     */
    CompletableFuture<Void> putTransferred(byte[] key, long expireAt, ByteBuf value) {
        return locks.lock(key).thenCompose(unlockWrites -> replicaLocks.lock(key).thenCompose(unlockReplicas -> {
            Runnable unlock = () -> {
                unlockReplicas.run();
                unlockWrites.run();
            };
            try {
                if (store.exists(key) || tombstones.containsKey(new ByteKey(key))
                        || expireAt > 0 && expireAt <= System.currentTimeMillis()) {
                    value.release();
                    unlock.run();
                    return CompletableFuture.<Void>completedFuture(null);
                }
                long length = value.readableBytes();
                return LocalPuts.put(store, key, value, new PutOptions(expireAt, Condition.IF_ABSENT, false, false))
                        .handle((r, e) -> {
                            unlock.run();
                            if (e != null) {
                                throw new java.util.concurrent.CompletionException(e);
                            }
                            fetched(length);
                            return null;
                        });
            } catch (RuntimeException e) {
                if (value.refCnt() > 0) {
                    value.release();
                }
                unlock.run();
                return CompletableFuture.<Void>failedFuture(e);
            }
        }));
    }

    /**
     * Notices this process standing still (SIGSTOP, a long GC pause, a frozen VM): a tick that comes half the failure
     * timeout late. The others may have excluded this node meanwhile and moved its slots on, and JGroups may never
     * tell it (see {@link io.kvtier.cluster.membership.Membership#rejoin}); so the node stops serving keys, forgets
     * that its data is current, and joins again. It serves once a table with a majority arrives, after dropping its
     * data and importing its slots afresh, as any joiner does.
     */
    private void watchPauses() {
        long limit = Math.max(200, settings.membership().failureTimeout().toMillis() / 2) * 1_000_000L;
        long last = System.nanoTime();
        while (!closed) {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                return;
            }
            long now = System.nanoTime();
            if (now - last > limit && !closed) {
                log.warn("{}: this process stood still for {} ms; not serving keys, rejoining the cluster",
                        topology.self().id(), (now - last) / 1_000_000);
                fencedUntilNanos = Long.MAX_VALUE;
                rejoinAfterPause();
                now = System.nanoTime();
            }
            last = now;
        }
    }

    private void rejoinAfterPause() {
        rejoining = true; // the next majority table drops local data first (install() reads it)
        try {
            tables.membership().rejoin();
        } catch (IOException e) {
            log.error("{}: rejoin failed; still not serving keys", topology.self().id(), e);
        }
    }

    /**
     * The kinds of node-to-node requests, each on connections of its own. A peer connection runs its requests in
     * order, so a request that waits for a remote answer holds up every request behind it; if that answer were queued
     * behind it, in this or another connection, the two would wait on each other until the peer timeout. Lanes are
     * ordered so that a request only ever waits for requests of a later lane: a forwarded command may fetch keys
     * (TRANSFER) and replicate (REPLICATION); a transfer read takes a key's lock, which a write holds while it
     * replicates; replication waits for nothing remote.
     */
    public enum Lane {
        /** KVT.FWD: commands proxied to their slot's primary. */
        FORWARD,
        /** KVT.PEEK, KVT.SLOTKEYS, KVT.SLOTINFO: state transfer to a slot's new owners. */
        TRANSFER,
        /** KVT.REPL, KVT.RDEL, KVT.FLUSH: a primary's writes to its backups; they wait only for the local store. */
        REPLICATION
    }

    /** Sends a command to {@code member} on {@code lane}'s connections; see {@link PeerPool#send}. */
    public CompletableFuture<Reply> send(Lane lane, Member member, Object... args) {
        return lanes.get(lane).send(address(member), args);
    }

    public long epochForRequests() {
        return Math.max(epoch(), observedEpoch.get());
    }

    public SlotTableService tables() {
        return tables;
    }

    @Override
    public void close() {
        closed = true;
        pauseWatch.interrupt();
        importer.close();
        if (tables != null) {
            tables.close();
        }
        lanes.values().forEach(PeerPool::close);
        clientResources.close();
    }

    /** Whether {@link #close} has begun. */
    public boolean closed() {
        return closed;
    }

    /**
     * Whether this node has served a slot table since it started: before that it answers clients -LOADING (it may
     * hold stale data and knows no owners); after, a node that stops serving answers -CLUSTERDOWN.
     */
    public boolean joined() {
        return joined;
    }

    /** Waits up to {@code timeoutMillis} for the first table; for the server's start-up. */
    public boolean awaitServing(long timeoutMillis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (!topology.serving() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        return topology.serving();
    }

    /** A key as a map key. */
    public record ByteKey(byte[] bytes) {
        @Override
        public boolean equals(Object o) {
            return o instanceof ByteKey k && Arrays.equals(bytes, k.bytes);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(bytes);
        }
    }
}
