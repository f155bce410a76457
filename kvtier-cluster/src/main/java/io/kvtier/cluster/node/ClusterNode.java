package io.kvtier.cluster.node;

import io.kvtier.client.ClientOptions;
import io.kvtier.client.ClientResources;
import io.kvtier.client.PeerPool;
import io.kvtier.client.Reply;
import io.kvtier.client.cluster.SlotHash;
import io.kvtier.cluster.Member;
import io.kvtier.cluster.SlotTable;
import io.kvtier.cluster.error.TryAgainException;
import io.kvtier.cluster.topology.ClusterConfig;
import io.kvtier.cluster.topology.ConfigService;
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
import java.util.List;
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
 *   epoch went to the newer owners. Which epoch is fresh enough comes from the Raft log (ClusterConfig.completeEpoch:
 *   the newest epoch an owner of the slot was known complete at; writes wait for one, checkWritable), so an importer
 *   never takes an older copy because the fresh ones are out of reach (completeEpochRequired, ADR 0005 Decision 5b).
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
 * - Configuration and leases (ADR 0005, ConfigService). Tables come from a Raft log; this node serves only tables in
 *   which its incarnation (this process) is active, and a slot as primary only while it holds a lease and every other
 *   active member is past the epoch since which it has been the slot's primary (checkServable). A process that is
 *   included in a table of several members for the first time drops its local data first: it may be stale, since the
 *   others went on without it. A node excluded from the table (its lease ran out: a crash, a pause, a partition)
 *   stops serving but keeps its copies and their stamps, as a source for importers, until it is included again as a
 *   fresh member; alone in a table (a single-node cluster, restarted) a node keeps its data, as nobody else can have
 *   written.
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
    /** Pipelined connections to each peer per lane. */
    private static final int CONNECTIONS_PER_LANE = 4;
    /** The member processes ("id/incarnation") whose connections {@link #openLanes} opened; configuration thread. */
    private final java.util.Set<String> lanesOpened = ConcurrentHashMap.newKeySet();

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
    /** The cluster versions this node hands out and has seen (see {@link StateVersions}), for its replicator too. */
    private final StateVersions versions = new StateVersions();
    /** Where the stamps are kept across restarts, and whether the last stop was clean (see NodeState). */
    private final NodeState nodeState;
    /** Whether this process found its copies as a clean stop left them (read once, at start). */
    private final boolean startedClean;
    /**
     * Per importing slot, 1 while this node still holds its leftover copy from an earlier ownership (stamped in
     * lastComplete): not served (a key of it counts as here only once written here or settled from a fresh copy), but
     * offered to other importers, for whom it may be the copy they need (see moveSlots). Dropped by the importer once
     * it has found a fresh enough copy itself.
     */
    private final java.util.concurrent.atomic.AtomicIntegerArray leftover =
            new java.util.concurrent.atomic.AtomicIntegerArray(SlotHash.SLOTS);
    /** Per importing slot, the epoch since which this node has been importing it without a break. */
    private final AtomicLongArray importingSince = new AtomicLongArray(SlotHash.SLOTS);
    /**
     * Per slot, how many times this node dropped its local keys of the slot wholesale (included again after an
     * exclusion, or an owner again after a break): a held write from before must not replicate what the store has
     * now, which is no longer the state it wrote (see {@link HeldWrite}).
     */
    private final AtomicLongArray drops = new AtomicLongArray(SlotHash.SLOTS);
    /** Per slot, held writes of its keys not yet confirmed or given up (see {@link #heldWriteEnded}). */
    private final java.util.concurrent.atomic.AtomicIntegerArray heldWrites =
            new java.util.concurrent.atomic.AtomicIntegerArray(SlotHash.SLOTS);
    /** Per slot, repairs of keys whose held write was given up, not yet done (see {@link #repair}). */
    private final java.util.concurrent.atomic.AtomicIntegerArray suspects =
            new java.util.concurrent.atomic.AtomicIntegerArray(SlotHash.SLOTS);
    /** Keys written or deleted here while their slot was importing; a transferred copy must not overwrite them. */
    final ConcurrentHashMap<ByteKey, Boolean> tombstones = new ConcurrentHashMap<>();
    /** Taken by KVT.REPL/RDEL and transferred puts (after the write locks), never across a remote call. */
    private final KeyLocks replicaLocks = new KeyLocks();
    private final AtomicLong observedEpoch = new AtomicLong();
    private final Importer importer;
    /** This process among the lifetimes of its node id: a restarted node is a new incarnation, included afresh. */
    private final long incarnation = new java.security.SecureRandom().nextLong();
    private volatile Topology topology;
    /** Work paused until a new topology is installed or its pause ends, whichever comes first ({@link #retry}). */
    private final java.util.Set<Retry> retries = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;
    private ConfigService config;
    /** The configuration applied last, and this node's fence in it (see checkServable). */
    private volatile ClusterConfig applied = ClusterConfig.empty();
    private volatile long fence;
    /**
     * The configuration of the installed topology, published just before it: {@link #applied} is set only once the
     * table is installed, so a command between the two goes by this one, not a TRYAGAIN.
     */
    private volatile ClusterConfig installed = ClusterConfig.empty();
    /** {@link #rebalancePending}'s memo: the inputs it was worked out for, and the answer. */
    private volatile Object[] rebalanceMemo = {null, Boolean.FALSE};
    // Configuration thread only:
    private boolean active;
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
        this.nodeState = new NodeState(store.options().dir());
        versions.observe(store.maxRecoveredVersion()); // new versions start above every one stored here
        NodeState.Loaded loaded = nodeState.load();
        this.startedClean = loaded.clean();
        int held = 0;
        for (int s = 0; s < SlotHash.SLOTS; s++) {
            lastComplete.set(s, loaded.stamps()[s]);
            held += loaded.stamps()[s] != 0 ? 1 : 0;
        }
        if (loaded.existed()) {
            log.info("{}: found its copies of {} slots from before its restart ({}; {} keys)", self.id(), held,
                    loaded.clean() ? "a clean stop" : "an unclean stop: they are kept, not trusted as complete",
                    store.size());
        }
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
        saveState(false); // from now until a clean stop, a crash leaves these copies marked unclean
        try {
            config = ConfigService.start(settings.membership(), incarnation, settings.replicas(), this::importingSet,
                    this::configured);
        } catch (IOException | RuntimeException e) {
            lanes.values().forEach(PeerPool::close);
            clientResources.close();
            throw e;
        }
        importer.start();
    }

    public ClusterSettings settings() {
        return settings;
    }

    public TieredStore store() {
        return store;
    }

    /** The cluster versions this node hands out as a primary and has seen as a backup or importer. */
    public StateVersions versions() {
        return versions;
    }

    public KeyLocks locks() {
        return locks;
    }

    /** The locks of a backup's replication handlers; see the essay. */
    public KeyLocks replicaLocks() {
        return replicaLocks;
    }

    /**
     * The current topology; {@code serving} false until this node is active in an agreed table, and while it holds
     * no lease (cut off from the majority, or the cluster has no leader): it then answers CLUSTERDOWN, as a Redis
     * Cluster node in a minority does.
     */
    public Topology topology() {
        Topology t = topology;
        ConfigService c = config;
        if (t.serving() && c != null && c.everLeased() && !c.leaseValid()) {
            return new Topology(t.table(), t.self(), false, "this node holds no lease: its renewals do not commit "
                    + "(cut off from the majority, or no leader); it serves no keys until one does");
        }
        return t;
    }

    /** The installed topology whatever the lease: for a held write, which a lapse of the lease must not release. */
    public Topology installedTopology() {
        return topology;
    }

    /**
     * Runs {@code action} once, on a pool thread, {@code pauseMillis} from now or as soon as a topology other than
     * {@code seen} is installed, whichever comes first: a held write whose backup failed retries at once under the
     * table that replaced that backup, rather than up to a peer timeout later (its backoff), while its keys stay locked.
     */
    public void retry(Topology seen, long pauseMillis, Runnable action) {
        Retry r = new Retry(action);
        retries.add(r);
        CompletableFuture.delayedExecutor(pauseMillis, TimeUnit.MILLISECONDS).execute(r);
        if (topology != seen) {
            r.wake(); // installed between the caller's look and the add above: that wake missed it
        }
    }

    /** Wakes every {@link #retry} waiting: a new topology was installed. */
    private void wakeRetries() {
        for (Retry r : retries) {
            r.wake();
        }
    }

    /** One {@link #retry}: runs its action at the first of its pause's end and a wake, once. */
    private final class Retry implements Runnable {
        private final java.util.concurrent.atomic.AtomicReference<Runnable> action;

        Retry(Runnable action) {
            this.action = new java.util.concurrent.atomic.AtomicReference<>(action);
        }

        void wake() {
            if (action.get() != null) {
                CompletableFuture.runAsync(this); // where the pause's end would have run it: no new shared pool
            }
        }

        @Override
        public void run() {
            Runnable a = action.getAndSet(null);
            if (a != null) {
                retries.remove(this);
                a.run();
            }
        }
    }

    /**
     * Refuses (nothing ran: CLUSTERDOWN without a lease, TRYAGAIN during a handoff) to serve {@code slot} as its
     * primary unless this node holds its lease, the topology is the applied configuration's, and every other active
     * member is past the epoch since which this node has been the slot's primary (a former primary that has not
     * applied the newer table may still serve it).
     */
    public void checkServable(int slot) {
        ConfigService c = config;
        if (c != null && !c.everLeased()) {
            // Just included: its first renewal has not committed yet. A moment, not an outage: clients resend.
            throw new TryAgainException("this node was just included and awaits its first lease; retry");
        }
        if (c == null || !c.leaseValid()) {
            counters.refusedWrites().increment();
            throw new io.kvtier.cluster.error.ClusterDownException("this node holds no lease (its last renewal did not"
                    + " commit in time: it may be cut off from the majority); it serves no keys until it has one");
        }
        long epoch = topology.table().epoch();
        if (fenced(slot, epoch, applied, fence)) {
            throw new TryAgainException("slot " + slot + " is being handed over at epoch " + epoch + "; retry");
        }
    }

    /**
     * Whether {@code slot}, under the table of {@code epoch}, is still behind the handoff fence: the configuration it
     * came from ({@code now} if applied, else the one installed) made this node its primary later than every other
     * active member has confirmed.
     */
    private boolean fenced(int slot, long epoch, ClusterConfig now, long appliedFence) {
        boolean current = now.epoch() == epoch;
        ClusterConfig base = current ? now : installed;
        return base.epoch() != epoch || base.primarySince()[slot] > (current ? appliedFence : base.fence(selfId()));
    }

    /**
     * Refuses (TRYAGAIN, not run) a write to {@code slot} unless, in the configuration applied here, the slot is
     * complete at the installed table's epoch: one of its owners is known to hold all of its data, and receives this
     * write too. Otherwise every owner is still importing it, and a write acknowledged now would live only on owners
     * whose copies carry no complete stamp; after one more table change an importer could not tell their copy from an
     * older complete one ({@link ClusterConfig#completeEpoch}). Only with --replication sync: async promises nothing
     * on failover anyway.
     */
    public void checkWritable(int slot) {
        if (!writable(slot)) {
            counters.refusedWrites().increment();
            throw new TryAgainException("slot " + slot + " has no complete copy among its owners at epoch "
                    + topology.table().epoch() + " yet (they are importing it); writes wait for one; retry");
        }
    }

    /** Whether {@link #checkWritable} lets a write to {@code slot} through now. */
    public boolean writable(int slot) {
        if (!settings.syncReplication()) {
            return true;
        }
        long epoch = topology.table().epoch();
        ClusterConfig now = applied;
        ClusterConfig base = now.epoch() == epoch ? now : installed;
        return base.epoch() == epoch && base.completeEpoch()[slot] == epoch;
    }

    /**
     * The epoch a copy of {@code slot} must be complete at, or later, for this importing node to take it: one complete
     * at the slot's {@link ClusterConfig#completeEpoch} holds every acknowledged write of it; and one complete at the
     * epoch before this node started importing the slot is enough too, since every write after that reached this node
     * as an owner and stays here (a local write or delete wins over a transferred copy). An importer takes no older
     * copy, whoever is within reach.
     */
    long completeEpochRequired(int slot) {
        long complete = applied.completeEpoch()[slot];
        return complete == ClusterConfig.LOSS_ACCEPTED ? complete : Math.min(complete, importingSince.get(slot) - 1);
    }

    /**
     * Whether the operator accepted the loss of {@code slot}'s complete copies (ACCEPT-LOSS): its importers then merge
     * the best copies that survive (see {@link ClusterConfig#LOSS_ACCEPTED}).
     */
    boolean lossAccepted(int slot) {
        return applied.completeEpoch()[slot] == ClusterConfig.LOSS_ACCEPTED;
    }

    /**
     * Whether a copy of {@code slot} stamped {@code stamp} (a lastComplete, 0 for none) is one this node may import:
     * complete at {@link #completeEpochRequired} or later; any in the cluster's first table, nothing being older.
     */
    boolean freshEnough(int slot, long stamp) {
        if (firstTable()) {
            return true;
        }
        long required = completeEpochRequired(slot);
        if (required == ClusterConfig.LOSS_ACCEPTED) {
            return stamp != 0; // any copy that survived, clean or not: the best of them are merged
        }
        return stamp != 0 && !dirty(stamp) && epochOf(stamp) >= required;
    }

    private String selfId() {
        return settings.membership().nodeId();
    }

    /** The control plane's membership (peers' bus ports for CLUSTER NODES); null before this node started it. */
    public io.kvtier.cluster.membership.Membership membership() {
        ConfigService c = config;
        return c == null ? null : c.membership();
    }

    /**
     * Leaves the cluster for good (an operator's leave or drain): this node's slots are placed among the others, who
     * copy them from it while it still runs; it asks to be included no more. Completes once the log committed it.
     */
    public CompletableFuture<Boolean> leaveCluster() {
        ConfigService c = config;
        if (c == null) {
            return CompletableFuture.failedFuture(new IllegalStateException("this node has not joined a cluster"));
        }
        log.warn("{}: leaving the cluster for good (an operator's leave): its slots go to the others, which copy them "
                + "from it while it runs", selfId());
        return c.depart();
    }

    /**
     * Takes member {@code id} out of the cluster (an operator's forget): it must be down; its slots are placed among the
     * others. Completes with false if it is not down (up, or unknown).
     */
    public CompletableFuture<Boolean> forget(String id) {
        ConfigService c = config;
        if (c == null) {
            return CompletableFuture.failedFuture(new IllegalStateException("this node has not joined a cluster"));
        }
        return c.forget(id);
    }

    /**
     * Accepts the loss of {@code slots}' complete copies, as decided at table {@code epoch} (nothing happens if the
     * table changed since): their owners merge the best copies that survive. Completes with whether any slot was
     * accepted.
     */
    public CompletableFuture<Boolean> acceptLoss(long epoch, BitSet slots) {
        ConfigService c = config;
        if (c == null) {
            return CompletableFuture.failedFuture(new IllegalStateException("this node has not joined a cluster"));
        }
        log.warn("{}: accepting the loss of the complete copies of {} slots ({}): their owners will serve the best "
                + "copies that survive", selfId(), slots.cardinality(), Importer.ranges(slots));
        return c.acceptLoss(epoch, slots);
    }

    /**
     * The Raft voters as this node sees them: all of them, those it cannot reach (not in its control-plane view), and
     * how many more may fail before nothing commits (no table change, no lease: no service).
     */
    public record Quorum(List<String> voters, List<String> unreachable, int failuresTolerated) {
    }

    /** {@link Quorum} now; empty before {@link #join}. */
    public Quorum quorum() {
        ConfigService c = config;
        if (c == null) {
            return new Quorum(List.of(), List.of(), 0);
        }
        List<String> voters = c.voters();
        java.util.Set<String> reachable = new java.util.HashSet<>();
        c.membership().members().forEach(m -> reachable.add(m.id()));
        List<String> unreachable = voters.stream().filter(v -> !reachable.contains(v)).toList();
        int alive = voters.size() - unreachable.size();
        return new Quorum(voters, unreachable, Math.max(0, alive - (voters.size() / 2 + 1)));
    }

    /** Slots this node imports that the last import round found no fresh enough copy of within reach. */
    public BitSet waitingSlots() {
        return importer.waiting();
    }

    /**
     * Whether some slot is led by another owner than its first in placement order, which is complete for it: a
     * REBALANCE is coming (a member back from down, or a joiner, that finished importing). Worked out again only
     * when its inputs change (a new table, a member complete for more slots), not per call nor per renewal: it serves
     * a table from the placement, milliseconds of an event loop's time (CLUSTER INFO asks it).
     */
    public boolean rebalancePending() {
        ClusterConfig c = applied;
        Object[] memo = rebalanceMemo;
        List<Object> inputs = c.rebalanceInputs();
        if (!inputs.equals(memo[0])) {
            memo = new Object[] {inputs, c.rebalanceWanted()};
            rebalanceMemo = memo;
        }
        return (Boolean) memo[1];
    }

    /** Whether this process found its copies as a clean stop left them (false after a crash, kill -9, power loss). */
    public boolean startedClean() {
        return startedClean;
    }

    /** The agreed configuration applied here, with its lease, voters and leader; null before {@link #join}. */
    public ConfigService config() {
        return config;
    }

    /**
     * Whether every active member has confirmed (applied and renewed under) table {@code epoch}, the one this node has
     * applied: from then on every write, on any primary, is replicated to this table's owners.
     */
    boolean everyMemberConfirmed(long epoch) {
        ClusterConfig c = applied;
        return c.epoch() == epoch && c.members().values().stream().allMatch(a -> a.fence() >= epoch);
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

    /** Whether this importing node's copy of {@code slot} is still a leftover: not served until settled key by key. */
    boolean leftover(int slot) {
        return leftover.get(slot) != 0;
    }

    /** The stamp of this node's own leftover copy of {@code slot} (0 if it has none), for a merge of copies. */
    long ownCopyStamp(int slot) {
        return leftover.get(slot) != 0 ? lastComplete.get(slot) : 0;
    }

    /**
     * Whether the installed table is the cluster's first with members: no slot was ever held, so an owner that finds
     * no complete copy has nothing to import. Later, no complete copy within reach means its holders are away.
     */
    boolean firstTable() {
        return applied.firstTable(topology.table().epoch());
    }

    public int importingSlots() {
        return state.count(SlotState.IMPORTING);
    }

    /**
     * Slots this node is the primary of that {@link #checkServable} still refuses with TRYAGAIN: a handoff that not
     * every other member has confirmed yet (their renewals carry the epoch they applied, every quarter lease).
     */
    public int fencedSlots() {
        ClusterNode.Topology t = topology;
        SlotTable table = t.table();
        ClusterConfig now = applied;
        long appliedFence = fence;
        int n = 0;
        for (int slot = 0; slot < SlotHash.SLOTS; slot++) {
            if (t.isSelf(table.primary(slot)) && fenced(slot, table.epoch(), now, appliedFence)) {
                n++;
            }
        }
        return n;
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

    /** How many times this node dropped its local keys of {@code keys}' slots, per key (see {@link #drops}). */
    public long[] drops(byte[][] keys) {
        long[] out = new long[keys.length];
        for (int i = 0; i < keys.length; i++) {
            out[i] = drops.get(SlotHash.slot(keys[i]));
        }
        return out;
    }

    /** A held write of {@code keys} began: until it ends, a stop cannot call its slots' copies here clean. */
    void heldWriteStarted(byte[][] keys) {
        for (byte[] key : keys) {
            heldWrites.incrementAndGet(SlotHash.slot(key));
        }
    }

    /**
     * A held write of {@code keys} ended, {@code confirmed} by its backups or given up. Given up, the value it wrote
     * stays here although the others may never have had it: this node's copy of those slots may differ from theirs.
     * The slots are marked ({@link NodeState#UNCONFIRMED}: no importer takes the copy while a clean one can be had, a
     * restart does not reuse it), and where
     * this node still owns a slot that another node now leads, each key is repaired at once from that primary's copy;
     * a slot whose repairs all succeed is clean again. Called with the keys' locks still held.
     */
    void heldWriteEnded(byte[][] keys, boolean confirmed) {
        for (byte[] key : keys) {
            heldWrites.decrementAndGet(SlotHash.slot(key));
        }
        if (confirmed) {
            return;
        }
        Topology t = topology;
        for (byte[] key : keys) {
            int slot = SlotHash.slot(key);
            lastComplete.accumulateAndGet(slot, NodeState.UNCONFIRMED, (a, b) -> a == 0 ? 0 : a | b);
            Member primary = t.serving() && t.table().isOwned() ? t.table().primary(slot) : null;
            boolean owner = primary != null && t.table().owners(slot).stream().anyMatch(t::isSelf);
            if (owner && !t.isSelf(primary) && !closed) {
                suspects.incrementAndGet(slot);
                repair(key, store.version(key), primary, t.table().epoch());
            }
        }
        saveState(false);
    }

    /**
     * Replaces this node's state of {@code key}, the unconfirmed one at version {@code unconfirmed} (-1: a delete),
     * with {@code primary}'s (KVT.PEEK), under the key's locks, unless replication changed the key here since (its
     * version here is another, or a state newer than the primary's answer was applied in its bucket). When every repair
     * of its slot succeeded, clears the slot's mark; a failed or skipped one leaves it marked.
     */
    private void repair(byte[] key, long unconfirmed, Member primary, long epoch) {
        int slot = SlotHash.slot(key);
        send(Lane.TRANSFER, primary, "KVT.PEEK", Long.toString(epoch), key).thenCompose(r -> {
            try {
                if (!(r instanceof Reply.Aggregate a) || a.elements().size() != 4
                        || !(a.elements().get(1) instanceof Reply.Int expiry)
                        || !(a.elements().get(2) instanceof Reply.Int version)) {
                    throw new IllegalStateException("unexpected KVT.PEEK reply from " + primary.id() + ": " + r);
                }
                if (expiry.value() == -2 || !(a.elements().get(3) instanceof Reply.Bulk bulk)) {
                    return underKeyLocks(key, () -> store.version(key) != unconfirmed
                            ? CompletableFuture.completedFuture(Boolean.TRUE) // replicated since: the primary's state
                            : store.remove(key, false).thenApply(x -> Boolean.TRUE));
                }
                ByteBuf value = bulk.content().retain();
                versions.observe(version.value());
                return underKeyLocks(key, () -> {
                    if (store.version(key) != unconfirmed) {
                        value.release();
                        return CompletableFuture.completedFuture(Boolean.TRUE); // replicated since: the primary's state
                    }
                    if (versions.newest(key) > version.value()) {
                        value.release(); // a newer state in its bucket: this key's, or another's (cannot tell)
                        return CompletableFuture.completedFuture(Boolean.FALSE);
                    }
                    return LocalPuts.put(store, key, value, new PutOptions(expiry.value(), Condition.ALWAYS, false,
                            false, version.value())).thenApply(x -> Boolean.TRUE);
                });
            } finally {
                Reply.release(r);
            }
        }).whenComplete((repaired, e) -> {
            if (e != null || !repaired) {
                log.warn("{}: a key of slot {} written here was not confirmed and could not be repaired from {} ({});"
                        + " its copy here stays marked", topology.self().id(), slot, primary.id(),
                        e != null ? e.toString() : "a newer state of its bucket came meanwhile");
                return;
            }
            if (suspects.decrementAndGet(slot) == 0 && heldWrites.get(slot) == 0) {
                lastComplete.accumulateAndGet(slot, ~NodeState.UNCONFIRMED, (a, b) -> a & b);
                saveState(false);
            }
        });
    }

    /**
     * A graceful stop wrote every memory value to disk: the stamps are saved as clean, except for slots with a held
     * write still unresolved (its value here may be one the others never had), which are marked.
     */
    public void stoppedCleanly() {
        for (int s = 0; s < SlotHash.SLOTS; s++) {
            if (heldWrites.get(s) > 0) {
                lastComplete.accumulateAndGet(s, NodeState.UNCONFIRMED, (a, b) -> a == 0 ? 0 : a | b);
            }
        }
        saveState(true);
        log.info("{}: stopped cleanly; its copies are kept for its restart", topology.self().id());
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
            int slot = SlotHash.slot(key);
            if (importing(slot) && !tombstones.containsKey(new ByteKey(key))
                    && (leftover.get(slot) != 0 || !store.exists(key))) {
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

    /** Marks {@code slots} complete if the topology is still at {@code epoch}, and says whether it was. */
    boolean completed(java.util.BitSet slots, long epoch) {
        synchronized (this) {
            if (topology.table().epoch() != epoch) {
                return false;
            }
            for (int s = slots.nextSetBit(0); s >= 0; s = slots.nextSetBit(s + 1)) {
                if (state.moveIf(s, SlotState.IMPORTING, SlotState.COMPLETE)) {
                    lastComplete.set(s, stamp(topology.table()));
                }
            }
            tombstones.keySet().removeIf(k -> !importing(SlotHash.slot(k.bytes())));
        }
        int left = importingSlots();
        log.info("{}: {} slots imported at epoch {}; {} still importing", topology.self().id(), slots.cardinality(),
                epoch, left);
        ConfigService c = config;
        if (c != null && left == 0) {
            c.renewNow(); // reports it: the log marks its slots complete, and writes to them may go on
        }
        return true;
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

    /**
     * lastComplete's stamp for {@code table}: its epoch in the high 32 bits, flags below ({@link NodeState#DIRTY},
     * {@link NodeState#UNCONFIRMED}).
     * Epochs are unique (one table per epoch, ADR 0005), so the epoch alone names the table.
     */
    static long stamp(SlotTable table) {
        return table.epoch() << 32;
    }

    static long epochOf(long stamp) {
        return stamp >>> 32;
    }

    /** Whether a stamp marks a copy that is not trusted as complete (see {@link NodeState#UNTRUSTED}). */
    static boolean dirty(long stamp) {
        return (stamp & NodeState.UNTRUSTED) != 0;
    }

    /**
     * Whether a stamp marks a copy that holds every acknowledged write and perhaps one never confirmed, and nothing
     * worse ({@link NodeState#UNCONFIRMED} without {@link NodeState#DIRTY}).
     */
    static boolean unconfirmedOnly(long stamp) {
        return (stamp & NodeState.UNTRUSTED) == NodeState.UNCONFIRMED;
    }

    /** Writes this node's stamps to its data directory, with the clean flag; failures are logged, not thrown. */
    synchronized void saveState(boolean clean) {
        long[] stamps = new long[SlotHash.SLOTS];
        for (int s = 0; s < stamps.length; s++) {
            stamps[s] = lastComplete.get(s);
        }
        try {
            nodeState.save(stamps, clean);
        } catch (IOException e) {
            log.error("{}: cannot write {} ({}): after a restart this node imports the slots it owns again",
                    topology.self().id(), NodeState.FILE, e.toString());
        }
    }

    /**
     * lastComplete of every slot, 8 bytes each, big-endian, then 1 if this node serves (is active in an agreed table):
     * what KVT.SLOTINFO answers.
     */
    public byte[] slotInfo() {
        ByteBuffer out = ByteBuffer.allocate((SlotHash.SLOTS + 1) * Long.BYTES);
        for (int s = 0; s < SlotHash.SLOTS; s++) {
            out.putLong(lastComplete.get(s));
        }
        Topology t = topology;
        out.putLong(t.serving() ? 1 : 0); // whether the stamps above are current
        return out.array();
    }

    // ---- configuration (configuration thread) ----

    /** A configuration the log applied: a new table is installed; renewals only move the fence. */
    private void configured(ClusterConfig c) {
        if (c.epoch() != applied.epoch() || !active && c.isActive(topology.self().id(), incarnation)) {
            install(c);
        }
        fence = c.fence(topology.self().id());
        applied = c;
    }

    /**
     * Serves {@code c}'s table if this incarnation is active in it: drops what may be stale, moves every slot to its
     * new state and publishes the topology. Otherwise owns nothing (and, if it was active, drops its data: the others
     * went on without it).
     */
    private void install(ClusterConfig c) {
        SlotTable table = c.table();
        Member self = topology.self();
        boolean present = c.isActive(self.id(), incarnation);
        if (!present) {
            synchronized (this) {
                if (active) {
                    // Its copies stay, unserved, with their lastComplete stamps: if the slots' new owners have not
                    // finished importing them when a second change comes, this node may hold the newest complete copy
                    // (Importer.sources); and when it is included again they are where it starts from (its import
                    // copies only the keys that differ from a fresh copy).
                    if (closed || config != null && config.departing()) {
                        log.info("{}: down at epoch {} as it stops or leaves; keeps its {} keys", self.id(), c.epoch(),
                                store.size());
                    } else {
                        log.warn("{}: excluded at epoch {} (its lease ran out); not serving its {} keys, asking to be "
                                + "included again", self.id(), c.epoch(), store.size());
                    }
                    for (int s = 0; s < SlotHash.SLOTS; s++) {
                        state.move(s, SlotState.NONE);
                    }
                    tombstones.clear();
                }
                active = false;
                installed = c;
                topology = new Topology(table, self, false, joined
                        ? "this node is not in the agreed slot table (epoch " + c.epoch() + "); it asks to be included"
                        : "this node has not joined its cluster yet");
            }
            wakeRetries();
            return;
        }
        // Alone, a node holds everything only in a single-node cluster (or the cluster's first table): a cluster of
        // several voters shrunk to one member has that member's own slots complete, not the others'.
        boolean singleNode = config != null && config.voters().size() == 1;
        boolean alone = table.members().size() == 1 && (singleNode || c.firstTable(c.epoch()));
        int importing;
        synchronized (this) {
            if (!active && !alone && c.firstTable(c.epoch()) && store.size() > 0) {
                // A new cluster's first table: nothing was written in it yet, so keys here come from somewhere else (a
                // data directory kept while its Raft log was not); they are no part of this cluster.
                log.warn("{}: founding a new cluster at epoch {} with {} keys from elsewhere in its data directory: "
                        + "dropping them", self.id(), c.epoch(), store.size());
                dropAll();
            } else if (!active && store.size() > 0) {
                log.info("{}: included at epoch {} among {} members with {} local keys: keeps them, serves the slots "
                        + "whose copy here is complete, and for the others copies only the keys that differ from a "
                        + "fresh copy", self.id(), c.epoch(), table.members().size(), store.size());
            }
            active = true;
            // In the cluster's first table every owner holds all its slots' data, none having been written yet (a
            // member that had local data dropped it above, unless alone): it serves them complete at once. Importing
            // them instead left them unstamped, and a second table that came before those imports finished found no
            // complete copy anywhere and waited for ever (a five-node start in CI).
            importing = moveSlots(table, alone || c.firstTable(c.epoch()), c.completeEpoch());
            installed = c;
            topology = new Topology(table, table.members().stream().filter(m -> m.id().equals(self.id()))
                    .findFirst().orElse(self), true, null);
            joined = true;
        }
        saveState(false); // before the renewal that reports the slots complete here (ConfigService renews next)
        log.info("{}: serving epoch {} over {} members: {} slots primary, {} owned, {} importing", self.id(),
                table.epoch(), table.members().size(), table.primaryCount(self), table.ownedCount(self), importing);
        wakeRetries();
        importer.forgetHolders();
        importer.wake();
        openLanes(c);
    }

    /**
     * Opens this node's connections to the other active members of {@code c} that it has not opened them to yet (per
     * process: a member restarted is a new one), every connection of every lane, with a PING each whose answer is
     * dropped, so that a command's first replication or forward does not pay for the connect, AUTH and TLS
     * handshakes, nor, in a process just started, for loading both sides' peer paths: in MiniCluster's first cluster
     * of a JVM the first write took 0.8 s of its 1 s peer timeout, and past it answered -UNREPLICATED. Configuration
     * thread only.
     */
    private void openLanes(ClusterConfig c) {
        java.util.Set<String> now = new java.util.HashSet<>();
        c.members().values().forEach(a -> now.add(a.member().id() + "/" + a.incarnation()));
        lanesOpened.retainAll(now); // those gone are forgotten: the set stays the size of the membership
        for (ClusterConfig.Active a : c.members().values()) {
            Member m = a.member();
            if (m.id().equals(selfId()) || !lanesOpened.add(m.id() + "/" + a.incarnation())) {
                continue;
            }
            for (Lane lane : Lane.values()) {
                for (int i = 0; i < CONNECTIONS_PER_LANE; i++) {
                    send(lane, m, "PING").whenComplete((reply, e) -> Reply.release(reply));
                }
            }
        }
    }

    /** Forgets every slot and drops every local key. */
    private void dropAll() {
        for (int s = 0; s < SlotHash.SLOTS; s++) {
            drops.incrementAndGet(s);
            leftover.set(s, 0);
            state.move(s, SlotState.NONE);
            lastComplete.set(s, 0); // before the keys go: a transfer read checks the stamp after the value
        }
        store.clear().join();
        tombstones.clear();
    }

    /**
     * Moves every slot to its state under {@code table}: not an owner, NONE (its copy here, if any, stays as a source
     * for others, see {@link #reapCopies}); an owner already complete (or alone, or in the cluster's first table),
     * COMPLETE; an owner whose copy here (from before a restart, an exclusion or an earlier ownership) is clean and
     * complete at an epoch no older than the slot's {@code completeEpoch} (nobody can have written it since), COMPLETE
     * too; otherwise IMPORTING, keeping whatever is here of it as the base its import compares with a fresh copy
     * ({@link #leftover}: unserved until settled). Returns how many import.
     */
    private int moveSlots(SlotTable table, boolean founding, long[] completeEpoch) {
        Member self = topology.self();
        int importing = 0;
        int reused = 0;
        for (int s = 0; s < SlotHash.SLOTS; s++) {
            boolean owner = table.owners(s).stream().anyMatch(m -> m.id().equals(self.id()));
            SlotState old = state.get(s);
            long stamp = lastComplete.get(s);
            SlotState next;
            if (!owner) {
                next = SlotState.NONE;
            } else if (old == SlotState.COMPLETE || founding) {
                next = SlotState.COMPLETE; // or alone in a single-node cluster: nobody else can hold newer data
            } else if (old == SlotState.NONE && stamp != 0 && !dirty(stamp) && completeEpoch[s] > 0
                    && epochOf(stamp) >= completeEpoch[s]) {
                next = SlotState.COMPLETE;
                reused++;
            } else {
                next = SlotState.IMPORTING;
                if (old != SlotState.IMPORTING) {
                    // What is here of the slot is where the import starts: a key counts as here once it is written
                    // here or found equal to (or replaced by) a fresh copy's, and the rest goes when the import ends.
                    leftover.set(s, 1);
                    drops.incrementAndGet(s);
                }
            }
            if (next != SlotState.IMPORTING) {
                leftover.set(s, 0);
            }
            if (next == SlotState.COMPLETE) {
                lastComplete.set(s, stamp(table) | (old == SlotState.COMPLETE ? stamp & NodeState.UNTRUSTED : 0));
            }
            if (next == SlotState.IMPORTING) {
                importing++;
                if (old != SlotState.IMPORTING) {
                    importingSince.set(s, table.epoch());
                }
            }
            state.move(s, next);
        }
        if (reused > 0) {
            log.info("{}: {} slots it owns are complete here already (its copy is clean, and nobody wrote them since)",
                    self.id(), reused);
        }
        // A tombstone speaks only for the import it was made in: keep none past it.
        tombstones.keySet().removeIf(k -> !importing(SlotHash.slot(k.bytes())));
        return importing;
    }

    /**
     * Deletes this node's copies of slots it does not own once they cannot serve anyone: every owner of the slot in
     * the applied configuration is complete for it (the log says so), so no importer needs an older copy. Run by the
     * importer between rounds, while this node is active (an excluded node keeps everything: it may hold the newest
     * copy of a slot whose new owners have not finished). Returns how many keys it deleted.
     */
    int reapCopies() {
        BitSet reap = new BitSet(SlotHash.SLOTS);
        synchronized (this) {
            ClusterConfig c = applied;
            Topology t = topology;
            if (!active || !t.serving() || c.epoch() != t.table().epoch()) {
                return 0;
            }
            for (int s = 0; s < SlotHash.SLOTS; s++) {
                if (state.get(s) == SlotState.NONE && lastComplete.get(s) != 0 && allOwnersComplete(c, s)) {
                    reap.set(s);
                    lastComplete.set(s, 0); // before the keys go: a transfer read checks the stamp after the value
                    drops.incrementAndGet(s);
                }
            }
        }
        if (reap.isEmpty()) {
            return 0;
        }
        saveState(false);
        List<byte[]> keys = new ArrayList<>();
        store.forEachKey(key -> {
            if (reap.get(SlotHash.slot(key))) {
                keys.add(key);
            }
        });
        List<CompletableFuture<?>> removals = new ArrayList<>();
        for (byte[] key : keys) {
            removals.add(underKeyLocks(key, () -> state.get(SlotHash.slot(key)) == SlotState.NONE
                    ? store.remove(key, false) : CompletableFuture.completedFuture(null)));
        }
        CompletableFuture.allOf(removals.toArray(CompletableFuture[]::new)).join();
        log.info("{}: deleted its copies of {} slots it no longer owns ({} keys): their owners are all complete",
                topology.self().id(), reap.cardinality(), keys.size());
        return keys.size();
    }

    /** Whether every owner of {@code slot} in {@code c}'s table is complete for it in the log. */
    private static boolean allOwnersComplete(ClusterConfig c, int slot) {
        if (!c.table().isOwned()) {
            return false;
        }
        for (Member m : c.table().owners(slot)) {
            ClusterConfig.Active a = c.members().get(m.id());
            if (a == null || !a.complete().get(slot)) {
                return false;
            }
        }
        return true;
    }

    /**
     * The members an importer asks for a slot's data: {@code all} starts with everyone else in the table (the first
     * {@code required}, who must all answer), then the reachable nodes that are not in it (excluded ones keep their
     * copies until they are included again, see install), asked too but not waited for, since after two changes in a
     * row one of them may hold the newest complete copy of a slot.
     */
    record Sources(List<Member> all, int required) {
    }

    /** {@link Sources} under the installed table, read once. */
    Sources sources() {
        Topology t = topology;
        List<Member> out = new ArrayList<>(t.table().members().stream()
                .filter(m -> !t.isSelf(m) && !m.endpoint().isEmpty()).toList());
        int required = out.size();
        ConfigService c = config;
        if (c != null) {
            for (Member m : c.membership().members()) {
                if (!t.isSelf(m) && !m.endpoint().isEmpty() && out.stream().noneMatch(o -> o.id().equals(m.id()))) {
                    out.add(m);
                }
            }
        }
        return new Sources(out, required);
    }

    long epoch() {
        return topology.table().epoch();
    }

    /**
     * A fresh copy says {@code key} is absent: if its slot still holds a leftover copy here, the leftover key goes
     * (unless written here since) and the key counts as settled. With {@code merge} (a slot whose loss was accepted:
     * its surviving copies are merged) an absent key elsewhere says nothing, and the key here stays. Under the key's
     * write and replica locks.
     */
    CompletableFuture<Void> settleAbsent(byte[] key, boolean merge) {
        if (leftover.get(SlotHash.slot(key)) == 0 || merge) {
            return CompletableFuture.completedFuture(null);
        }
        ByteKey k = new ByteKey(key);
        return underKeyLocks(key, () -> {
            CompletableFuture<?> removed = leftover.get(SlotHash.slot(key)) != 0 && !tombstones.containsKey(k)
                    ? store.remove(key, false) : CompletableFuture.completedFuture(null);
            return removed.thenRun(() -> tombstones.put(k, Boolean.TRUE));
        });
    }

    /**
     * A fresh copy holds {@code key} at cluster version {@code version}, expiring at {@code expireAt}: whether the
     * value here is that very state (same version and expiry; or, with {@code merge}, a newer version), so that the key
     * is settled without copying its bytes. Settles it if so.
     */
    boolean settleIfSame(byte[] key, long version, long expireAt, boolean merge) {
        if (version == 0) {
            return false; // an unversioned value (older format, or a single node's): its bytes decide, so copy them
        }
        long here = store.version(key);
        boolean same = here == version && store.expireAt(key) == expireAt || merge && here > version;
        if (same) {
            tombstones.put(new ByteKey(key), Boolean.TRUE);
        }
        return same;
    }

    /**
     * This node's import of {@code slots} found a fresh enough copy of them elsewhere and starts comparing its own
     * copies (leftovers) with it: their stamps go first (no importer takes a copy being changed), persisted. Returns
     * false if the table changed meanwhile.
     */
    boolean beginDiff(BitSet slots, long epoch) {
        boolean changed = false;
        synchronized (this) {
            if (topology.table().epoch() != epoch) {
                return false;
            }
            for (int s = slots.nextSetBit(0); s >= 0; s = slots.nextSetBit(s + 1)) {
                if (leftover.get(s) != 0 && state.get(s) == SlotState.IMPORTING && lastComplete.get(s) != 0) {
                    lastComplete.set(s, 0);
                    changed = true;
                }
            }
        }
        if (changed) {
            saveState(false);
        }
        return true;
    }

    /**
     * Ends the comparison of this node's copies of {@code slots} with a fresh copy: every key of them here that was
     * neither written here during the import nor found in the fresh copy is deleted (it is not there any more), each
     * under its locks; with {@code merge} they stay (a merge of surviving copies keeps every key). Returns false if
     * the table changed meanwhile.
     */
    boolean finishDiff(BitSet slots, long epoch, boolean merge) {
        BitSet mine = new BitSet();
        synchronized (this) {
            if (topology.table().epoch() != epoch) {
                return false;
            }
            for (int s = slots.nextSetBit(0); s >= 0; s = slots.nextSetBit(s + 1)) {
                if (leftover.get(s) != 0 && state.get(s) == SlotState.IMPORTING) {
                    mine.set(s);
                }
            }
        }
        if (mine.isEmpty()) {
            return true;
        }
        List<byte[]> keys = new ArrayList<>();
        if (!merge) {
            store.forEachKey(key -> {
                if (mine.get(SlotHash.slot(key)) && !tombstones.containsKey(new ByteKey(key))) {
                    keys.add(key);
                }
            });
        }
        List<CompletableFuture<?>> removals = new ArrayList<>();
        for (byte[] key : keys) {
            removals.add(underKeyLocks(key, () -> tombstones.containsKey(new ByteKey(key))
                    ? CompletableFuture.completedFuture(null) : store.remove(key, false)));
        }
        CompletableFuture.allOf(removals.toArray(CompletableFuture[]::new)).join();
        synchronized (this) {
            if (topology.table().epoch() != epoch) {
                return false;
            }
            for (int s = mine.nextSetBit(0); s >= 0; s = mine.nextSetBit(s + 1)) {
                leftover.set(s, 0);
            }
        }
        if (!keys.isEmpty()) {
            log.info("{}: deleted {} keys of {} slots that a fresh copy no longer has", topology.self().id(),
                    keys.size(), mine.cardinality());
        }
        return true;
    }

    /**
     * Puts a transferred value (cluster version {@code version}) unless the key was written or deleted here during
     * the import, or is here at that very version already; a leftover key here is older and is replaced (with
     * {@code merge}, only by a newer version). Under the key's write lock (against local writes) and its replica lock
     * (against replication from the primary).
     */
    CompletableFuture<Void> putTransferred(byte[] key, long expireAt, ByteBuf value, long version, boolean merge) {
        versions.observe(version);
        return underKeyLocks(key, () -> {
            try {
                boolean stale = leftover.get(SlotHash.slot(key)) != 0; // a leftover here is older: replace it
                long here = store.version(key);
                boolean keepHere = merge ? here >= version && here > 0 : !stale && here >= 0;
                if (keepHere || tombstones.containsKey(new ByteKey(key))
                        || expireAt > 0 && expireAt <= System.currentTimeMillis()) {
                    value.release();
                    if (stale) {
                        tombstones.put(new ByteKey(key), Boolean.TRUE);
                    }
                    return CompletableFuture.<Void>completedFuture(null);
                }
                long length = value.readableBytes();
                return LocalPuts.put(store, key, value, new PutOptions(expireAt,
                                stale || merge ? Condition.ALWAYS : Condition.IF_ABSENT, false, false, version))
                        .thenRun(() -> {
                            if (stale) {
                                tombstones.put(new ByteKey(key), Boolean.TRUE); // settled: fresher than the leftover
                            }
                            fetched(length);
                        });
            } catch (RuntimeException e) {
                if (value.refCnt() > 0) {
                    value.release();
                }
                throw e;
            }
        });
    }

    /**
     * Runs {@code body} under {@code key}'s write lock (against local writes), then its replica lock (against
     * replication from the primary), the order every transfer takes them; releases both when it completes, or fails.
     */
    private <T> CompletableFuture<T> underKeyLocks(byte[] key, java.util.function.Supplier<CompletableFuture<T>> body) {
        return locks.lock(key).thenCompose(unlockWrites -> replicaLocks.lock(key).thenCompose(unlockReplicas -> {
            CompletableFuture<T> done;
            try {
                done = body.get();
            } catch (RuntimeException e) {
                done = CompletableFuture.failedFuture(e);
            }
            return done.whenComplete((r, e) -> {
                unlockReplicas.run();
                unlockWrites.run();
            });
        }));
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

    /**
     * Sends a command to {@code member} on {@code lane}'s connections; see {@link PeerPool#send}. A peer the
     * membership's {@link io.kvtier.cluster.membership.LinkFilter} does not reach (in-JVM fault tests) gets nothing:
     * the call times out after the peer timeout, as over a cut network.
     */
    public CompletableFuture<Reply> send(Lane lane, Member member, Object... args) {
        var links = settings.membership().links();
        if (links != null && !links.reaches(member.id())) {
            for (Object a : args) {
                if (a instanceof ByteBuf b && b.refCnt() > 0) {
                    b.release(); // as PeerPool does with the arguments of a call it sent
                }
            }
            return new CompletableFuture<Reply>().orTimeout(settings.peerTimeout().toMillis(), TimeUnit.MILLISECONDS);
        }
        return lanes.get(lane).send(address(member), args);
    }

    public long epochForRequests() {
        return Math.max(epoch(), observedEpoch.get());
    }


    @Override
    public void close() {
        close(true);
    }

    /**
     * Stops as a killed process would, for in-JVM fault tests: no leave (the others exclude this node once its lease
     * runs out). The caller has cut its links first ({@link io.kvtier.cluster.membership.LinkFilter}), so that
     * closing the control plane's channel says nothing to the others either.
     */
    public void crash() {
        close(false);
    }

    private void close(boolean graceful) {
        closed = true;
        importer.close();
        if (config != null) {
            if (graceful) {
                leave();
                awaitReplicated();
            }
            config.close();
        }
        lanes.values().forEach(PeerPool::close);
        clientResources.close();
    }

    /**
     * A graceful stop's last step before its connections close: waits (at most the peer timeout) until the writes that
     * began before it stopped serving have been answered by their backups, so that their clients get their answers
     * rather than -UNREPLICATED when the replication connections close under them.
     */
    private void awaitReplicated() {
        long deadline = System.nanoTime() + settings.peerTimeout().toNanos();
        try {
            while (replicationBacklog.writes() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (replicationBacklog.writes() > 0) {
            log.warn("{}: stopping with {} writes still unconfirmed by their backups after the peer timeout",
                    selfId(), replicationBacklog.writes());
        }
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
        ConfigService c = config;
        return joined && c != null && c.everLeased(); // a table applied, and the lease that lets it serve
    }

    /**
     * Waits up to {@code timeoutMillis} for the first table and the first lease (until then clients are answered
     * -LOADING); for the server's start-up.
     */
    public boolean awaitServing(long timeoutMillis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (!(topology.serving() && joined()) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        return topology.serving() && joined();
    }

    /**
     * A graceful stop: stops serving, then goes down in the agreed table (STOP), so that the other owners of this
     * node's slots lead them as soon as the log commits it rather than a lease later; the slots stay this node's and
     * come back to it when it restarts (its copies are kept, see {@link #stoppedCleanly}). Waits at most a lease;
     * without a majority the lease runs out.
     */
    private void leave() {
        Topology t = topology;
        if (!t.serving()) {
            return;
        }
        topology = new Topology(t.table(), t.self(), false, "this node is stopping");
        wakeRetries();
        long lease = settings.membership().lease().toMillis();
        try {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(lease);
            if (config.stop().get(lease, TimeUnit.MILLISECONDS)) {
                // Until the others have applied the table without this node, their proxies still send it commands
                // for its slots: it answers them TRYAGAIN (not serving) and they resend to the new primaries once
                // they apply it, which they report with their next renewal (at once). Closing the connections before
                // that turned such a command into -UNREACHABLE ("may or may not have run") at the client.
                long stopEpoch = config.current().epoch();
                boolean confirmed = false;
                while (!(confirmed = config.current().members().values().stream()
                        .allMatch(a -> a.fence() >= stopEpoch)) && System.nanoTime() < deadline) {
                    Thread.sleep(5);
                }
                log.info("{}: stopped: down in the slot table at epoch {}, its slots led by their other owners until it "
                        + "is back{}", t.self().id(), stopEpoch, confirmed ? "" : " (not every member confirmed that"
                        + " table within a lease)");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            log.warn("{}: could not say it stops ({}); the others take over once its lease runs out",
                    t.self().id(), e.toString());
        }
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
