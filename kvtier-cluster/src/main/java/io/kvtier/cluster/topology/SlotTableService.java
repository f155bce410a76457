package io.kvtier.cluster.topology;

import io.kvtier.cluster.Member;
import io.kvtier.cluster.SlotTable;
import io.kvtier.cluster.membership.ClusterOptions;
import io.kvtier.cluster.membership.Membership;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Slot-table publication (issue: "On a view change the coordinator publishes an epoch-numbered slot table; stale
 * epochs are rejected").
 *
 * Design. On every view it sees, the coordinator (JGroups' oldest member) takes epoch = highest epoch it has seen + 1,
 * computes Placement over the view's members, installs that table and broadcasts (epoch, members, replicas): the
 * inputs, not the 16384 slots, since Placement is deterministic and every node recomputes the identical table. Every
 * node installs a table only if its epoch is above the installed one; equal or lower epochs are counted and dropped.
 * A joiner gets the current table because a join is a view change and the coordinator republishes on every one.
 *
 * Failover. Every node tracks the highest epoch it has seen, from its own tables and from every announcement, stale
 * or not. A node that becomes coordinator after the old one left or died therefore publishes above anything the old
 * coordinator announced to it. After a merge of two partitions, the merged coordinator may have seen lower epochs than
 * the other side installed; those nodes would reject its table forever. So a node that drops a table below the
 * highest epoch it has seen broadcasts an epoch hint, and a coordinator hinted above its installed epoch republishes
 * above the hint. Not a consensus protocol: two coordinators at once (a split, or nodes that started alone and then
 * merged) may publish the same epoch with different members; a node that drops a table of its own epoch that differs
 * from its own hints one above it, so the merged coordinator republishes above both.
 *
 * Threading. JGroups threads only enqueue; one service thread handles views and messages in arrival order, computes
 * tables (milliseconds: keeps Placement off JGroups' view-installation path) and calls the listener, so installs are
 * never concurrent. The first view arrives during Membership.join, before the service knows its Membership; the
 * thread waits for the join to finish before its first task.
 */

/**
 * This node's view of the slot table: the newest epoch-numbered table the coordinator published, recomputed locally.
 * The installed epoch only grows. Thread-safe; the listener is called on one service thread, in install order.
 */
public final class SlotTableService implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SlotTableService.class);
    /** First byte of an epoch hint: kind, then an epoch the coordinator must publish above (long). */
    static final byte EPOCH_HINT_KIND = 2;
    private static final long CLOSE_TIMEOUT_MS = 5_000;

    /** Told of every table this node installs. */
    @FunctionalInterface
    public interface Listener {
        /**
         * {@code table} is now {@link SlotTableService#current()}. Called on the service thread, in increasing epoch
         * order, never concurrently; do not block or close the service from it. An exception is logged and ignored.
         */
        void tableInstalled(SlotTable table);
    }

    private final int replicas;
    private final Listener listener;
    private final InstalledTable installed = new InstalledTable();
    private final ExecutorService thread;
    private final CountDownLatch joined = new CountDownLatch(1);
    private volatile Membership membership;
    /** Set first thing in {@link #close}: a publication that fails from then on is expected, not worth a warning. */
    private volatile boolean closing;

    private SlotTableService(String nodeId, int replicas, Listener listener) {
        if (replicas < 0) {
            throw new IllegalArgumentException("--replicas " + replicas + " must be at least 0");
        }
        this.replicas = replicas;
        this.listener = listener;
        this.thread = Executors.newSingleThreadExecutor(Thread.ofPlatform().name("kvtier-slot-table-" + nodeId)
                .daemon().factory());
    }

    /**
     * Joins the cluster (see {@link Membership#join}) and starts following its slot tables; the first table arrives
     * asynchronously, through {@code listener}. The service owns the membership and closes it on {@link #close}.
     *
     * @param replicas backups per slot, used when this node coordinates (the coordinator's value wins)
     * @throws IOException if the membership cannot start
     */
    public static SlotTableService start(ClusterOptions options, int replicas, Listener listener) throws IOException {
        SlotTableService service = new SlotTableService(options.nodeId(), replicas, listener);
        try {
            service.membership = Membership.join(options, service.new MembershipEvents());
        } catch (IOException | RuntimeException e) {
            service.thread.shutdownNow();
            throw e;
        }
        service.joined.countDown();
        return service;
    }

    /** The installed table; before the first, an empty epoch-0 table that owns nothing. */
    public SlotTable current() {
        return installed.current();
    }

    /** The installed table's epoch; 0 before the first. */
    public long epoch() {
        return installed.current().epoch();
    }

    /** Announced tables dropped because their epoch was not above the installed one. */
    public long staleCount() {
        return installed.staleCount();
    }

    /** The membership the tables follow. */
    public Membership membership() {
        return membership;
    }

    /** Leaves the cluster and stops the service thread; idempotent. */
    @Override
    public void close() {
        closing = true;
        membership.close();
        thread.shutdown();
        try {
            if (!thread.awaitTermination(CLOSE_TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
                log.warn("{}: slot table thread still busy {} ms after close", membership.self().id(),
                        CLOSE_TIMEOUT_MS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void onView(List<Member> members) {
        if (membership.isCoordinator()) {
            publish(members);
        }
    }

    private void publish(List<Member> members) {
        TableAnnouncement announcement = new TableAnnouncement(installed.nextEpoch(), members, replicas);
        // Sent before the local install, which runs the listener (slot states, purges): the other nodes start on the
        // new table that much sooner. A peer that acts on it before this node has it is told to retry (TRYAGAIN).
        try {
            membership.broadcast(announcement.encode());
        } catch (IOException e) {
            if (!closing) {
                log.warn("{}: slot table epoch {} not published", membership.self().id(), announcement.epoch(), e);
            }
        }
        install(announcement.table());
    }

    private void onMessage(Member from, byte[] payload) {
        if (payload.length == 0) {
            log.warn("{}: empty control message from {}; ignored", membership.self().id(), from.id());
        } else if (payload[0] == TableAnnouncement.KIND) {
            onAnnouncement(from, payload);
        } else if (payload[0] == EPOCH_HINT_KIND && payload.length == 1 + Long.BYTES) {
            onEpochHint(ByteBuffer.wrap(payload, 1, Long.BYTES).getLong());
        } else {
            log.warn("{}: unknown control message (kind {}, {} bytes) from {}; ignored", membership.self().id(),
                    payload[0], payload.length, from.id());
        }
    }

    private void onAnnouncement(Member from, byte[] payload) {
        TableAnnouncement announcement;
        try {
            announcement = TableAnnouncement.decode(payload);
        } catch (IllegalArgumentException e) {
            log.warn("{}: bad slot table announcement from {}: {}", membership.self().id(), from.id(),
                    e.getMessage());
            return;
        }
        SlotTable table = announcement.table();
        if (!install(table)) {
            log.debug("{}: ignored slot table epoch {} from {}: installed epoch {}", membership.self().id(),
                    announcement.epoch(), from.id(), epoch());
            if (table.epoch() == epoch() && !table.equals(current())) {
                // Two coordinators published one epoch (nodes that bootstrapped or split apart, then merged): the
                // coordinator must publish above it, or the two sides keep different tables of equal epoch forever.
                log.info("{}: slot table epoch {} from {} differs from the installed one; asking for a newer table",
                        membership.self().id(), table.epoch(), from.id());
                sendEpochHint(installed.maxSeenEpoch() + 1);
            } else if (announcement.epoch() < installed.maxSeenEpoch()) {
                sendEpochHint(installed.maxSeenEpoch());
            }
        }
    }

    private void onEpochHint(long epoch) {
        installed.observe(epoch);
        if (membership.isCoordinator() && epoch > epoch()) {
            publish(membership.members());
        }
    }

    /** Asks the coordinator to publish above {@code epoch}; every node remembers it as seen. */
    private void sendEpochHint(long epoch) {
        byte[] hint = ByteBuffer.allocate(1 + Long.BYTES).put(EPOCH_HINT_KIND).putLong(epoch).array();
        try {
            membership.broadcast(hint);
        } catch (IOException e) {
            if (!closing) {
                log.warn("{}: epoch hint not sent", membership.self().id(), e);
            }
        }
    }

    private boolean install(SlotTable table) {
        if (!installed.offer(table)) {
            return false;
        }
        log.info("{}: installed slot table epoch {} over {}", membership.self().id(), table.epoch(),
                table.members().stream().map(Member::id).toList());
        try {
            listener.tableInstalled(table);
        } catch (RuntimeException e) {
            log.error("{}: slot table listener failed on epoch {}", membership.self().id(), table.epoch(), e);
        }
        return true;
    }

    /** Runs {@code task} on the service thread once the join has finished; dropped after close. */
    private void enqueue(Runnable task) {
        try {
            thread.execute(() -> {
                try {
                    joined.await();
                    task.run();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (RuntimeException e) {
                    log.error("slot table task failed", e);
                }
            });
        } catch (RejectedExecutionException e) {
            log.debug("slot table service closed; event dropped");
        }
    }

    /** JGroups' callbacks, handed to the service thread. */
    private final class MembershipEvents implements Membership.Listener {
        @Override
        public void viewChanged(long viewId, List<Member> members) {
            enqueue(() -> onView(members));
        }

        @Override
        public void messageReceived(Member from, byte[] payload) {
            enqueue(() -> onMessage(from, payload));
        }
    }
}
