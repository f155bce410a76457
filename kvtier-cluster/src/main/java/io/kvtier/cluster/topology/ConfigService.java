package io.kvtier.cluster.topology;

import io.kvtier.cluster.Member;
import io.kvtier.cluster.Placement;
import io.kvtier.cluster.membership.ClusterOptions;
import io.kvtier.cluster.membership.Membership;
import java.io.IOException;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.jgroups.raft.RaftHandle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * The configuration agreed by consensus, and this node's lease (ADR 0005).
 *
 * The cluster's configuration (active members, candidates, epoch, replicas, and so the slot table) is the state of a
 * Raft log (jgroups-raft, on the control plane's JGroups channel). A table is in force once the log commits it: a
 * majority of the configured voters, whatever the current view, so two sides of a partition can never both commit,
 * and a node cut off, restarted or alone never founds a cluster (unless configured as a single-node one).
 *
 * Leases. Every node proposes RENEW every quarter lease. A renewal the log commits for this node's active incarnation
 * gives it a lease from the moment it sent the renewal until lease * (1 - DRIFT) later, on its own monotonic clock. The
 * leader excludes a member only when lease * (1 + DRIFT) has passed on the leader's monotonic clock since the leader
 * applied that member's newest renewal (which it applied after the member sent it), and only if no renewal committed
 * since (EXCLUDE carries the renewal count it saw). Assumption: the monotonic clocks of two nodes advance at rates
 * within DRIFT of real time; wall clocks play no part. So an excluded member has stopped serving before the table
 * that excludes it commits.
 *
 * Handoffs. A node serves a slot as primary only if, besides its lease, every other active member is known (from its
 * committed renewals, which report the table epoch it has applied) to be past the epoch since which this node has been
 * the slot's primary: a former primary that has not applied the new table yet may still be serving it. Nodes renew at
 * once after applying a new table, so a handoff between live nodes takes a couple of log commits.
 *
 * Joins. A process whose incarnation is not active is recorded as a candidate by its renewals; the leader includes it
 * (a new table) once the old incarnation of its id, if any, has run out its lease, and adds it to Raft's voters. Only
 * the leader proposes INCLUDE and EXCLUDE; JGroups' failure detection decides nothing.
 */

/**
 * This node's view of the agreed configuration and its lease. Thread-safe; the listener is called on one thread, in
 * the order the log applies configurations.
 */
public final class ConfigService implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ConfigService.class);
    /** Bound on how far two nodes' monotonic clocks may drift apart, as a fraction of elapsed time. */
    public static final double DRIFT = 0.02;
    private static final long CLOSE_TIMEOUT_MS = 5_000;

    /** Told of every configuration this node applies. */
    @FunctionalInterface
    public interface Listener {
        /** Called on the service's thread, in log order, never concurrently; an exception is logged and ignored. */
        void configured(ClusterConfig config);
    }

    private final ClusterOptions options;
    private final Member self;
    private final long incarnation;
    private final int replicas;
    private final Listener listener;
    private final Supplier<BitSet> importing;
    private final long leaseNanos;
    private final ConfigStateMachine machine;
    private final ExecutorService delivery;
    private final ScheduledExecutorService ticker;
    private final AtomicBoolean renewing = new AtomicBoolean();
    /** A renewal asked for while one was in flight: sent when that one completes, with the state as it is then. */
    private final AtomicBoolean renewAgain = new AtomicBoolean();
    private final AtomicBoolean controlling = new AtomicBoolean();
    /** The ticker thread's memo of {@link #rebalanceWanted}: what it was worked out for, and the answer. */
    private List<Object> rebalanceCheckedFor = List.of();
    private boolean rebalanceWanted;
    private Membership membership;
    private RaftHandle raft;
    private volatile long leaseUntilNanos;
    /** When this node last asked failure detection to verify the leader (renewal completions only). */
    private volatile long lastLeaderSuspicionNanos;
    /** When this node last became the Raft leader (System.nanoTime), 0 while it is not; the ticker thread only. */
    private long leaderSinceNanos;
    /** Renewals failed since the last that committed (the renewing thread and its completions, one at a time). */
    private volatile int renewFailures;
    private volatile long appliedEpoch;
    private volatile boolean closing;
    /** Set by {@link #depart}: this process left the cluster and renews no more (it would be a candidate again). */
    private volatile boolean departing;

    private ConfigService(ClusterOptions options, long incarnation, int replicas, Supplier<BitSet> importing,
                          Listener listener) {
        this.importing = importing;
        this.options = options;
        this.self = new Member(options.nodeId(), options.weight(), options.endpoint());
        this.incarnation = incarnation;
        this.replicas = replicas;
        this.listener = listener;
        this.leaseNanos = options.lease().toNanos();
        this.machine = new ConfigStateMachine(this::applied);
        String name = options.nodeId();
        this.delivery = Executors.newSingleThreadExecutor(Thread.ofPlatform().name("kvtier-config-" + name).daemon()
                .factory());
        this.ticker = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().name("kvtier-lease-" + name)
                .daemon().factory());
    }

    /**
     * Joins the control plane and starts following the configuration log; configurations arrive asynchronously.
     *
     * @param incarnation this process's identity among the lifetimes of its node id (random per start)
     * @param replicas    backups per slot, proposed if this node is the first leader
     * @param importing   the slots this node is importing now, reported with each renewal
     * @throws IOException if the channel cannot start
     */
    public static ConfigService start(ClusterOptions options, long incarnation, int replicas, Supplier<BitSet> importing,
                                      Listener listener) throws IOException {
        ConfigService service = new ConfigService(options, incarnation, replicas, importing, listener);
        try {
            service.membership = Membership.create(options, (viewId, members) -> { });
            service.raft = new RaftHandle(service.membership.channel(), service.machine);
            service.membership.connect();
        } catch (IOException | RuntimeException e) {
            service.delivery.shutdownNow();
            service.ticker.shutdownNow();
            throw e;
        }
        long lease = Math.max(1, service.leaseNanos / 1_000_000);
        service.ticker.scheduleWithFixedDelay(service::renew, 0, Math.max(10, lease / 4), TimeUnit.MILLISECONDS);
        // The leader's checks run more often than renewals: a dead member is excluded soon after its lease ran out.
        service.ticker.scheduleWithFixedDelay(service::control, 0, Math.max(10, lease / 20), TimeUnit.MILLISECONDS);
        return service;
    }

    /** The configuration applied here so far. */
    public ClusterConfig current() {
        return machine.current();
    }

    public Membership membership() {
        return membership;
    }

    public long incarnation() {
        return incarnation;
    }

    /** Whether this process has held a lease at least once. */
    public boolean everLeased() {
        return leaseUntilNanos != 0;
    }

    /** Whether this node holds a lease now: a committed renewal sent less than lease * (1 - DRIFT) ago. */
    public boolean leaseValid() {
        return System.nanoTime() - leaseUntilNanos < 0;
    }

    /** Whether this node leads the Raft group now. */
    public boolean isLeader() {
        return raft != null && raft.isLeader();
    }

    /** The Raft leader's node id, or null if none is known. */
    public String leader() {
        var leader = raft == null ? null : raft.leader();
        return leader == null ? null : String.valueOf(leader);
    }

    /** Raft's voters as the log has them. */
    public List<String> voters() {
        return raft == null ? List.of() : raft.raft().members();
    }

    /**
     * Renews now (after a new table is applied: the others wait for this node's confirmation; after an import
     * finished: writes to its slots wait for the report). If a renewal is in flight, which may carry older state,
     * another follows as soon as it completes.
     */
    public void renewNow() {
        renewAgain.set(true);
        try {
            ticker.execute(this::renew);
        } catch (RejectedExecutionException closed) {
            // closing
        }
    }

    /**
     * Goes down (a graceful stop): its slots stay its own, led by their other owners until it is back. Completes once
     * the log committed it, or fails. The node must have stopped serving keys first.
     */
    /** Whether this node stops or leaves: it no longer renews once out of the table, nor asks to be included. */
    public boolean departing() {
        return departing;
    }

    public CompletableFuture<Boolean> stop() {
        // No renewal after the STOP: one would make this incarnation a candidate, and a leader (this node itself,
        // if it leads) would include it again while it shuts down, its slots then owned by a node that is gone.
        departing = true;
        return propose(ConfigStateMachine.stop(self.id(), incarnation));
    }

    /**
     * Leaves the cluster for good (an operator's leave): its slots are placed among the others, who copy them from
     * this node while it still runs. Completes once the log committed it, or fails.
     */
    public CompletableFuture<Boolean> leave() {
        return propose(ConfigStateMachine.leave(self.id(), incarnation));
    }

    /**
     * Leaves the cluster for good and stops asking to be included again (an operator's leave): completes once the
     * log committed the LEAVE; the node keeps serving its copies to the others, outside the table.
     */
    public CompletableFuture<Boolean> depart() {
        departing = true;
        return proposeForOperator(ConfigStateMachine.leave(self.id(), incarnation),
                () -> !current().isActive(self.id(), incarnation));
    }

    /** Takes member {@code id}, which must be down, out of the cluster (an operator's forget). */
    public CompletableFuture<Boolean> forget(String id) {
        return proposeForOperator(ConfigStateMachine.forget(id),
                () -> !current().down().containsKey(id) && !current().members().containsKey(id));
    }

    /**
     * Accepts the loss of {@code slots}' complete copies, as decided at {@code epoch}: their owners merge what survives
     * (ACCEPT-LOSS); nothing if the table changed since.
     */
    public CompletableFuture<Boolean> acceptLoss(long epoch, BitSet slots) {
        return proposeForOperator(ConfigStateMachine.acceptLoss(epoch, slots), () -> false);
    }

    /**
     * How long an operator's request (leave, forget, accept-loss) is proposed again while no leader commits it: an
     * election, when a node just left or stopped, is routine and takes a few leases (a LEAVE right after another
     * node's stop failed at once with "no leader"). Within the 10 s `kvtier cluster` waits for an answer by default.
     */
    private long operatorWaitNanos() {
        return Math.max(TimeUnit.SECONDS.toNanos(8), 4 * leaseNanos);
    }

    /**
     * Proposes {@code command} for an operator, again every 100 ms while a proposal fails (no leader, or its commit
     * not seen in time), up to {@link #operatorWaitNanos}. A proposal that failed that way may still have committed:
     * if a later one is refused, {@code done} says whether the change is in place anyway.
     */
    private CompletableFuture<Boolean> proposeForOperator(byte[] command, java.util.function.BooleanSupplier done) {
        CompletableFuture<Boolean> result = new CompletableFuture<>();
        attempt(command, done, System.nanoTime() + operatorWaitNanos(), false, result);
        return result;
    }

    private void attempt(byte[] command, java.util.function.BooleanSupplier done, long deadline, boolean retried,
                         CompletableFuture<Boolean> result) {
        propose(command).whenComplete((yes, e) -> {
            if (e == null) {
                result.complete(yes || retried && done.getAsBoolean());
                return;
            }
            if (closing || System.nanoTime() - deadline > 0) {
                result.completeExceptionally(e);
                return;
            }
            try {
                ticker.schedule(() -> attempt(command, done, deadline, true, result), 100, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException closed) {
                result.completeExceptionally(e);
            }
        });
    }

    /** Leaves the control plane and stops the service's threads; idempotent. */
    @Override
    public void close() {
        closing = true;
        ticker.shutdownNow();
        if (membership != null) {
            membership.close();
        }
        delivery.shutdown();
        try {
            if (!delivery.awaitTermination(CLOSE_TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
                log.warn("{}: configuration thread still busy {} ms after close", self.id(), CLOSE_TIMEOUT_MS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** From Raft's apply thread: hands the configuration to the service thread. */
    private void applied(ClusterConfig config) {
        try {
            delivery.execute(() -> {
                long before = appliedEpoch;
                try {
                    listener.configured(config);
                } catch (RuntimeException e) {
                    log.error("{}: configuration listener failed on epoch {}", self.id(), config.epoch(), e);
                }
                appliedEpoch = config.epoch();
                if (config.epoch() != before) {
                    renewNow(); // confirms the table: new primaries wait for it
                }
                if (!config.candidates().isEmpty()) {
                    // The placement their inclusion will apply, worked out here ahead of it: Raft's apply thread then
                    // finds it remembered instead of computing it, cold, while every renewal waits behind it.
                    java.util.Map<String, Member> placed = new java.util.TreeMap<>();
                    config.placedMembers().forEach(m -> placed.put(m.id(), m));
                    config.candidates().values().forEach(k -> placed.put(k.member().id(), k.member()));
                    try {
                        Placement.placement(new java.util.ArrayList<>(placed.values()), Math.max(0, config.replicas()));
                    } catch (RuntimeException e) {
                        log.debug("{}: placement worked out ahead failed: {}", self.id(), e.toString());
                    }
                }
            });
        } catch (RejectedExecutionException e) {
            log.debug("configuration service closed; configuration dropped");
        }
    }

    /**
     * When the renewal ticker last ran, and until when this node stood still: a gap of over half a lease between two
     * ticks (every quarter lease) means this process was paused or starved (System.nanoTime); the ticker thread only,
     * read by {@link #suspectLeader}.
     */
    private volatile long lastTickNanos;
    private volatile long stalledUntilNanos;

    /**
     * The local log's last appended index as last sampled, and when a sample last found it changed (the ticker thread
     * only): only the leader moves it on a follower, so it tells a leader that still sends, its commits slow (as while
     * a table is installed on a loaded machine), from one gone silent (cut off).
     */
    private long lastAppended = -1;
    private long appendedMovedNanos;

    /** Proposes a renewal unless one is in flight; a committed one for this incarnation extends the lease. */
    private void renew() {
        long tick = System.nanoTime();
        if (lastTickNanos != 0 && tick - lastTickNanos > leaseNanos / 2) {
            stalledUntilNanos = tick;
        }
        lastTickNanos = tick;
        var r = raft == null ? null : raft.raft();
        if (r != null && r.lastAppended() != lastAppended) {
            lastAppended = r.lastAppended();
            appendedMovedNanos = tick;
        }
        if (closing || raft == null || raft.leader() == null || departing && !machine.current().isActive(self.id(),
                incarnation)) {
            return;
        }
        if (!renewing.compareAndSet(false, true)) {
            // One is in flight. If none has committed for half a lease and the leader sent nothing since the last
            // tick (the log appended nothing), it is verified now, not when this renewal times out (up to a quarter
            // lease later): that wait was a quarter of every key's pause when the leader is cut off. A leader still
            // sending is left to the timeout: suspecting it while its commits are slow (a table being installed on a
            // loaded machine) risks a probe unanswered in time, and every node stalls while it is excluded.
            if (tick - appendedMovedNanos > leaseNanos / 8) {
                suspectLeader();
            }
            return;
        }
        renewAgain.set(false); // before reading the state this renewal reports
        long sent = System.nanoTime();
        long gcMillisAtSend = gcMillis();
        byte[] renewal = ConfigStateMachine.renew(self, incarnation, appliedEpoch, importing.get());
        propose(renewal).whenComplete((granted, e) -> {
            renewing.set(false);
            if (renewAgain.get() && !closing) {
                renewNow();
            }
            if (e == null && granted) {
                long until = sent + (long) (leaseNanos * (1 - DRIFT));
                long previous = leaseUntilNanos;
                if (previous == 0 || until - previous > 0) {
                    leaseUntilNanos = until;
                }
                if (previous != 0 && sent - previous > 0 && !closing) {
                    log.info("{}: lease held again; it had lapsed for {} ms", self.id(),
                            (System.nanoTime() - previous) / 1_000_000);
                }
                renewFailures = 0;
            } else if (e != null && !closing) {
                if (renewFailures++ == 0) {
                    // Once per streak: the lease runs out unless a later renewal commits in time.
                    // With what the operator needs to tell a slow log or network from this process standing still.
                    log.warn("{}: lease renewal failed (leader {}): {}; sent {} ms ago, {} ms of GC since, Raft {}",
                            self.id(), leader(), e.toString(), (System.nanoTime() - sent) / 1_000_000,
                            gcMillis() - gcMillisAtSend, raftState());
                    if (log.isDebugEnabled()) {
                        // On the lease ticker, not here: this may be the JVM's timer thread for every orTimeout.
                        try {
                            ticker.execute(() -> log.debug("{}: threads at the failed renewal:\n{}", self.id(),
                                    threadDump()));
                        } catch (RejectedExecutionException closed) {
                            // closing: no dump
                        }
                    }
                }
                suspectLeader();
            }
        });
    }

    /**
     * Every thread's stack, virtual threads included (JGroups runs on them), as the JDK writes a thread dump: debug
     * logging of a failed renewal, to show where a stalled control plane stands.
     */
    private static String threadDump() {
        java.nio.file.Path file = null;
        try {
            file = java.nio.file.Files.createTempDirectory("kvtier-threads").resolve("dump.txt");
            java.lang.management.ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class)
                    .dumpThreads(file.toString(), com.sun.management.HotSpotDiagnosticMXBean.ThreadDumpFormat.TEXT_PLAIN);
            return java.nio.file.Files.readString(file);
        } catch (IOException | RuntimeException e) {
            return "no thread dump: " + e;
        } finally {
            if (file != null) {
                try {
                    java.nio.file.Files.deleteIfExists(file);
                    java.nio.file.Files.deleteIfExists(file.getParent());
                } catch (IOException ignored) {
                    // a temporary file left behind
                }
            }
        }
    }

    /** Milliseconds this JVM has spent in garbage collection (pauses and concurrent work), summed over collectors. */
    private static long gcMillis() {
        long total = 0;
        for (var gc : java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()) {
            total += Math.max(0, gc.getCollectionTime());
        }
        return total;
    }

    /** The local Raft member's state, for the log: role, term, indexes, queued requests, and the leader's view. */
    private String raftState() {
        var r = raft == null ? null : raft.raft();
        if (r == null) {
            return "not started";
        }
        return "role " + r.role() + ", term " + r.currentTerm() + ", commit " + r.commitIndex() + ", appended "
                + r.lastAppended() + ", queued " + r.processingQueueSize() + ", awaiting " + r.requestTableSize()
                + ", log " + r.currentLogSize() + " B, snapshots " + r.numSnapshots()
                + (r.isLeader() ? ", followers " + r.commitTable().toString().replace('\n', ' ') : "") + "; "
                + transportState();
    }

    /** Retransmissions and send-queue drops below Raft: a dropped message holds back all later ones until resent. */
    private String transportState() {
        var stack = membership.channel().getProtocolStack();
        var nak = stack.findProtocol(org.jgroups.protocols.pbcast.NAKACK2.class);
        var uni = stack.findProtocol(org.jgroups.protocols.UNICAST3.class);
        var tcp = stack.findProtocol(org.jgroups.protocols.TCP.class);
        StringBuilder b = new StringBuilder();
        if (nak instanceof org.jgroups.protocols.pbcast.NAKACK2 n) {
            b.append("multicast retransmit requests sent ").append(n.getXmitRequestsSent()).append(", received ")
                    .append(n.getXmitRequestsReceived());
        }
        if (uni instanceof org.jgroups.protocols.UNICAST3 u) {
            b.append(", unicast retransmissions ").append(u.getNumXmits());
        }
        if (tcp instanceof org.jgroups.protocols.TCP t) {
            b.append(", connections ").append(t.printConnections().replace('\n', ' '));
        }
        return b.toString();
    }

    /**
     * A renewal failed, or is still in flight from a leader gone silent: if none has committed for half a lease now,
     * the leader may be cut off while the rest of the view can still elect another. Failure detection is asked to
     * verify it at once (it is excluded from the view if it does not answer a direct probe within the verification
     * timeout, and the others elect a leader among themselves) instead of after the whole failure timeout, by which
     * time every lease would have run out: the other nodes' keys then pause at most about a lease (issue 28). A leader
     * that answers is left alone; once per lease at most.
     */
    private void suspectLeader() {
        String leader = leader();
        long now = System.nanoTime();
        long lastGood = leaseUntilNanos - (long) (leaseNanos * (1 - DRIFT)); // when the last granted renewal was sent
        // Counted from the later of the last granted renewal and the end of this node's own last stall: a node back
        // from a pause (SIGSTOP, a long GC) finds its renewals failed while it stood still, which says nothing about
        // the leader (one that blamed the leader on resuming had a healthy leader excluded, and every node paused).
        long stalled = stalledUntilNanos;
        long since = stalled != 0 && stalled - lastGood > 0 ? stalled : lastGood;
        if (leader == null || leader.equals(self.id()) || leaseUntilNanos == 0 || now - since < leaseNanos / 2
                || now - lastLeaderSuspicionNanos < leaseNanos
                // A renewal's timeout can fire on resuming before the ticker has run and noticed the stall.
                || now - lastTickNanos > leaseNanos / 2
                // Nor while the view is new: renewals stall for a moment while a view (a merge) is installed.
                || now - membership.viewSinceNanos() < leaseNanos) {
            return;
        }
        lastLeaderSuspicionNanos = now;
        if (now - since > 3 * leaseNanos && membership.electIfCoordinator()) {
            // Three leases and the leader is still in the view, answering failure detection: it may have stopped
            // leading (a leader that stepped down in a minority view, named by everyone after the merge, ran no
            // election and nothing committed for a minute). As the view's coordinator, this node has one elected.
            log.warn("{}: renewals have not committed for {} ms although the leader {} is in the view: starting an "
                    + "election as the view's coordinator", self.id(), (now - lastGood) / 1_000_000, leader);
        } else if (membership.suspect(leader)) {
            log.warn("{}: renewals have not committed for {} ms: asking failure detection to verify the leader {} now",
                    self.id(), (now - lastGood) / 1_000_000, leader);
        }
    }

    /** When {@link #control} last said it excludes each member (nanoTime); touched only under {@code controlling}. */
    private final java.util.Map<String, Long> exclusionSaidAt = new java.util.HashMap<>();

    /**
     * The leader's duties, one step per tick: set the replicas once; exclude a member whose lease has surely run out;
     * include a candidate (once the old incarnation of its id, if any, has run out); make active members voters.
     */
    private void control() {
        if (closing || !isLeader()) {
            leaderSinceNanos = 0;
            return;
        }
        if (leaderSinceNanos == 0) {
            leaderSinceNanos = System.nanoTime();
        }
        if (!controlling.compareAndSet(false, true)) {
            return;
        }
        CompletableFuture<?> step = null;
        try {
            ClusterConfig c = machine.current();
            long now = System.nanoTime();
            long wait = (long) (leaseNanos * (1 + DRIFT));
            if (c.replicas() < 0) {
                // The voters of a new cluster come from --voters, which only its founders were given: a learner that
                // replays the log must find them there, or it takes itself for the only voter once it is added (and,
                // leading an election as the view's coordinator, could elect with its own vote). Adding a voter
                // already in the list changes nothing where it is, and is a log entry for those who replay it.
                CompletableFuture<?> chain = CompletableFuture.completedFuture(null);
                for (String voter : voters()) {
                    chain = chain.thenCompose(x -> addVoter(voter));
                }
                step = chain.thenCompose(x -> propose(ConfigStateMachine.setup(replicas)));
                return;
            }
            for (ClusterConfig.Active a : c.members().values()) {
                // Counted from when this node became leader at the latest: without a leader nobody could renew, so a
                // member's silence before that says nothing (a new leader excluded its whole majority once).
                Long applied = machine.renewedAtNanos(a.member().id());
                long renewed = applied == null || applied - leaderSinceNanos < 0 ? leaderSinceNanos : applied;
                boolean self = a.member().id().equals(this.self.id()) && a.incarnation() == incarnation;
                if (!self && now - renewed > wait) {
                    // Said once, then every 10 s while the exclusion does not commit (a leader cut off from the
                    // others proposes it on every tick).
                    Long said = exclusionSaidAt.get(a.member().id());
                    if (said == null || now - said > 10_000_000_000L) {
                        exclusionSaidAt.put(a.member().id(), now);
                        log.info("{}: {} (incarnation {}) renewed no lease for {} ms; excluding it", this.self.id(),
                                a.member().id(), Long.toHexString(a.incarnation()), (now - renewed) / 1_000_000);
                    }
                    step = propose(ConfigStateMachine.exclude(a.member().id(), a.incarnation(), a.renewals()));
                    return;
                }
            }
            List<String> inView = membership.members().stream().map(Member::id).toList();
            // Candidates the leader reaches, that have caught up with the configuration (a learner first, then a
            // member) and whose id has no active incarnation left (an older one is excluded first, above, once its
            // lease has run out); one table for all of them.
            List<ClusterConfig.Candidate> joining = c.candidates().values().stream()
                    .filter(k -> inView.contains(k.member().id()) && !c.members().containsKey(k.member().id())
                            && k.appliedEpoch() >= c.epoch() && renewsNow(k, now)
                            && !(departing && k.member().id().equals(self.id())))
                    .toList();
            if (!joining.isEmpty() && c.firstEpoch() == 0 && now - leaderSinceNanos < FOUNDING_WAIT_NANOS
                    && !joining.stream().map(k -> k.member().id()).toList().containsAll(voters())) {
                // A new cluster: its first table waits (a moment) for every founding voter, so that each leads its own
                // share from the start rather than after importing it from the first one in (a REBALANCE later).
                return;
            }
            if (!joining.isEmpty()) {
                log.info("{}: including {} at epoch {}", self.id(), joining.stream().map(k -> k.member().id()
                        + " (incarnation " + Long.toHexString(k.incarnation()) + ")").toList(), c.epoch() + 1);
                step = propose(ConfigStateMachine.include(joining));
                return;
            }
            if (rebalanceWanted(c)) {
                log.info("{}: members back or new have finished importing; giving them the lead of their slots at "
                        + "epoch {}", self.id(), c.epoch() + 1);
                step = propose(ConfigStateMachine.rebalance());
                return;
            }
            List<String> voters = voters();
            List<String> target = targetVoters(c, voters);
            for (String gone : voters) {
                if (!target.contains(gone) && !gone.equals(self.id())) {
                    // Removed first, then the one that takes its place (next tick): growing the voters instead keeps
                    // the gone one in every majority (n2 dead and a joiner n4 added, then n4 killed: 2 of {n1, n2,
                    // n3, n4} alive, nothing commits; ClusterBenchIT). A leader that is to go stays until it is gone
                    // (its successor removes it).
                    log.info("{}: removing {} from the voters {} (the voters wanted: {})", self.id(), gone, voters,
                            target);
                    step = removeVoter(gone);
                    return;
                }
            }
            for (String id : target) {
                if (!voters.contains(id)) {
                    log.info("{}: adding {} to the voters {} (the voters wanted: {})", self.id(), id, voters, target);
                    step = addVoter(id);
                    return;
                }
            }
        } catch (Exception e) {
            if (!closing) {
                log.warn("{}: configuration step failed: {}", self.id(), e.toString());
            }
        } finally {
            if (step == null) {
                controlling.set(false);
            } else {
                step.whenComplete((r, e) -> controlling.set(false));
            }
        }
    }

    /** How long a new cluster's first table waits for every founding voter to ask to join. */
    private static final long FOUNDING_WAIT_NANOS = 3_000_000_000L;

    /** Most voters a cluster keeps: more make every commit wait for more of them; the others are learners. */
    static final int MAX_VOTERS = 7;

    /**
     * The voters the leader works towards: the members that are up, and those down after a failure (they may come
     * back, and a majority must be able to take them back), but not those that stopped or left (a node scaled in
     * by a graceful stop no longer counts in the majority: the next failure must not take the quorum with it); at most
     * {@link #MAX_VOTERS}, up ones first; an odd number where there are more than two, dropping a member down first,
     * else the last by id (an even number tolerates no more failures than one fewer and needs a larger majority).
     * Never fewer than two while there are two to choose (one voter takes itself for a single-node cluster): with fewer
     * members the voters stay as they are.
     */
    static List<String> targetVoters(ClusterConfig c, List<String> current) {
        List<String> up = new java.util.ArrayList<>(c.members().keySet());
        List<String> crashed = c.down().values().stream().filter(d -> !d.stopped()).map(d -> d.member().id())
                .sorted().toList();
        List<String> target = new java.util.ArrayList<>(up);
        for (String id : crashed) {
            if (target.size() < MAX_VOTERS) {
                target.add(id);
            }
        }
        while (target.size() > MAX_VOTERS) {
            target.removeLast();
        }
        if (target.size() > 2 && target.size() % 2 == 0) {
            target.removeLast(); // a crashed one if any (they come last), else the last member up by id
        }
        if (target.size() < 2) {
            return current;
        }
        return target;
    }

    /**
     * Whether a REBALANCE would move the lead of a slot back to its first owner in placement order (complete for it
     * now), once every member confirmed the current table. Worked out again only when an epoch or a member's
     * completeness changed, not at every renewal.
     */
    private boolean rebalanceWanted(ClusterConfig c) {
        if (c.members().values().stream().anyMatch(a -> a.fence() < c.epoch())) {
            return false;
        }
        List<Object> key = c.rebalanceInputs();
        if (!key.equals(rebalanceCheckedFor)) {
            rebalanceCheckedFor = key;
            rebalanceWanted = c.rebalanceWanted();
        }
        return rebalanceWanted;
    }

    /**
     * Whether candidate {@code k} renewed within the last lease, as this leader applied it since it leads: a candidate
     * replayed from the log (a process that stopped, or an older incarnation of a restarted node) is not included.
     */
    private boolean renewsNow(ClusterConfig.Candidate k, long now) {
        Long at = machine.candidateRenewedAtNanos(k.member().id(), k.incarnation());
        return at != null && at - leaderSinceNanos > 0 && now - at < leaseNanos;
    }

    /** Adds {@code id} to Raft's voters through the log (a no-op where it is one already); within a lease. */
    private CompletableFuture<Boolean> addVoter(String id) {
        try {
            return raft.addServer(id).thenApply(r -> Boolean.TRUE).orTimeout(leaseNanos, TimeUnit.NANOSECONDS);
        } catch (Exception e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Removes {@code id} from Raft's voters through the log; within a lease. */
    private CompletableFuture<Boolean> removeVoter(String id) {
        try {
            return raft.removeServer(id).thenApply(r -> Boolean.TRUE).orTimeout(leaseNanos, TimeUnit.NANOSECONDS);
        } catch (Exception e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Proposes {@code command} through the leader; true if it committed and applied, false if it did not apply. */
    private CompletableFuture<Boolean> propose(byte[] command) {
        try {
            return raft.setAsync(command, 0, command.length)
                    .orTimeout(Math.max(1, leaseNanos / 2), TimeUnit.NANOSECONDS)
                    .thenApply(r -> r != null && r.length == 1 && r[0] == 1);
        } catch (Exception e) {
            return CompletableFuture.failedFuture(e);
        }
    }
}
