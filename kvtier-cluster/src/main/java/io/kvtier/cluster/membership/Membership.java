package io.kvtier.cluster.membership;

import io.kvtier.cluster.Member;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jgroups.Address;
import org.jgroups.JChannel;
import org.jgroups.Receiver;
import org.jgroups.View;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This node's membership in the cluster's control plane: a connected JGroups channel and the latest view, as members
 * sorted by id. Thread-safe; views are handled one at a time, in the order JGroups installs them.
 *
 * <p>Each node advertises its {@link Member} (id, weight and RESP endpoint) in its JGroups address (see
 * {@link MemberAddress}), and its logical JGroups name is its id, so JGroups' own logs speak the same ids.
 */
public final class Membership implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Membership.class);

    /** Told of every view; see {@link #viewChanged}. */
    @FunctionalInterface
    public interface Listener {
        /**
         * The view changed (a join, a leave, an exclusion after a failure, or a merge). Called on a JGroups thread,
         * never concurrently with itself and in view order, also once for the first view during
         * {@link Membership#join}. Keep it short (it holds up view installation), do not close the membership
         * from it, and do not throw: an exception is logged and otherwise ignored.
         *
         * @param viewId  the JGroups view id, increasing with every view this node sees
         * @param members the view's members, sorted by id, immutable
         */
        void viewChanged(long viewId, List<Member> members);
    }

    /** One view as kvtier sees it. */
    private record Snapshot(long viewId, List<Member> members, Address coordinator, long sinceNanos) {
    }

    private final ClusterOptions options;
    private final Member self;
    private final Listener listener;
    private final JChannel channel;
    private final Object viewLock = new Object();
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile Snapshot current = new Snapshot(-1, List.of(), null, System.nanoTime());

    private Membership(ClusterOptions options, Listener listener) throws Exception {
        this.options = options;
        this.self = new Member(options.nodeId(), options.weight(), options.endpoint());
        this.listener = listener;
        this.channel = new JChannel(ControlPlaneStack.build(options));
        channel.name(self.id());
        channel.addAddressGenerator(() -> MemberAddress.of(self));
        channel.setReceiver(new Receiver() {
            @Override
            public void viewAccepted(View view) {
                onView(view);
            }
        });
    }

    /**
     * Joins (or, if no seed answers within the join timeout, founds) the control plane; returns once the first view is
     * installed and reported to {@code listener}. Same as {@link #create} then {@link #connect}.
     *
     * @throws IOException if the channel cannot start (port taken, unknown seed host, ...); its message names the
     *                     node, the address and the cluster
     */
    public static Membership join(ClusterOptions options, Listener listener) throws IOException {
        Membership membership = create(options, listener);
        membership.connect();
        return membership;
    }

    /**
     * The membership, its channel built but not connected: protocols above it (Raft's handle) attach to
     * {@link #channel()} before {@link #connect}.
     *
     * @throws IOException if the stack cannot be built (unknown bind host, state directory not writable)
     */
    public static Membership create(ClusterOptions options, Listener listener) throws IOException {
        try {
            return new Membership(options, listener);
        } catch (Exception e) {
            throw new IOException("node " + options.nodeId() + " at " + options.bindHost() + ":"
                    + options.clusterPort() + " cannot build its cluster stack: " + e.getMessage(), e);
        }
    }

    /** Connects the channel: joins the control plane, or founds it if no seed answers within the join timeout. */
    public void connect() throws IOException {
        try {
            channel.connect(options.clusterName());
        } catch (Exception e) {
            channel.close();
            String dns = options.dnsQuery() == null ? "" : ", DNS query " + options.dnsQuery();
            throw new IOException("node " + options.nodeId() + " at " + options.bindHost() + ":"
                    + options.clusterPort() + " cannot join cluster " + options.clusterName() + " (seeds "
                    + options.seeds() + dns + "): " + e.getMessage(), e);
        }
    }

    /** The members of the latest view, sorted by id; immutable. */
    public List<Member> members() {
        return current.members();
    }

    /** The id of the latest view; -1 before the first. */
    public long viewId() {
        return current.viewId();
    }

    /** Each member's control-plane port as last seen in a view (CLUSTER NODES's bus port). */
    private final java.util.Map<String, Integer> clusterPorts = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * The control-plane port of member {@code id} (what Redis's CLUSTER NODES shows as a node's bus port): from its
     * transport address in the latest view that has it, or the last one known; 0 if never seen.
     */
    public int clusterPort(String id) {
        if (id.equals(self.id())) {
            return options.clusterPort();
        }
        View view = channel.getView();
        if (view != null) {
            for (Address a : view.getMembers()) {
                if (MemberAddress.decode(a).map(m -> m.id().equals(id)).orElse(false)
                        && channel.down(new org.jgroups.Event(org.jgroups.Event.GET_PHYSICAL_ADDRESS, a))
                        instanceof org.jgroups.stack.IpAddress ip) {
                    clusterPorts.put(id, ip.getPort());
                }
            }
        }
        return clusterPorts.getOrDefault(id, 0);
    }

    /** This node, as it advertises itself. */
    public Member self() {
        return self;
    }

    /** Whether this node leads the latest view (the oldest member; it will publish slot tables). */
    public boolean isCoordinator() {
        Address coordinator = current.coordinator();
        return coordinator != null && coordinator.equals(channel.getAddress());
    }

    /** Leaves the cluster gracefully (the others install a view without this node at once); idempotent. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            channel.close();
            log.info("{} left the cluster", self.id());
        }
    }

    /**
     * Asks failure detection to verify member {@code id} now (VERIFY_SUSPECT2 probes it directly; if it does not answer
     * within the verification timeout, the view excludes it), rather than after the failure timeout: for a member that
     * the cluster's own traffic already finds silent (the Raft leader, when renewals stop committing). A member that
     * answers is left alone. Returns false if {@code id} is not in the view.
     */
    public boolean suspect(String id) {
        View view = channel.getView();
        if (view == null) {
            return false;
        }
        for (Address a : view.getMembers()) {
            if (MemberAddress.decode(a).map(m -> m.id().equals(id)).orElse(false) && !a.equals(channel.getAddress())) {
                org.jgroups.protocols.VERIFY_SUSPECT2 verify = channel.getProtocolStack()
                        .findProtocol(org.jgroups.protocols.VERIFY_SUSPECT2.class);
                if (verify == null) {
                    return false;
                }
                verify.up(new org.jgroups.Event(org.jgroups.Event.SUSPECT, java.util.List.of(a)));
                return true;
            }
        }
        return false;
    }

    /**
     * Has the Raft leader elected again if this node coordinates the view: for when the leader every member names has
     * stopped leading (see {@link ControlPlaneElection#electIfCoordinator}). Returns whether a voting round started.
     */
    public boolean electIfCoordinator() {
        ControlPlaneElection election = channel.getProtocolStack().findProtocol(ControlPlaneElection.class);
        return election != null && election.electIfCoordinator();
    }

    /** When the current view was installed here (System.nanoTime). */
    public long viewSinceNanos() {
        return current.sinceNanos();
    }

    /** The channel: for the Raft handle of the configuration service, and for tests that inject faults. */
    public JChannel channel() {
        return channel;
    }

    private void onView(View view) {
        synchronized (viewLock) {
            Snapshot previous = current;
            Snapshot next = new Snapshot(view.getViewId().getId(), membersOf(view), view.getCoord(),
                    System.nanoTime());
            current = next;
            logChange(previous, next);
            try {
                listener.viewChanged(next.viewId(), next.members());
            } catch (RuntimeException e) {
                log.error("{}: view listener failed on view {}", self.id(), next.viewId(), e);
            }
        }
    }

    /**
     * The view's members sorted by id. Addresses that advertise no member are skipped; of two addresses with one id
     * (a restarted node whose old incarnation is not yet excluded) the older, earlier in the view, is kept, which
     * every node decides alike because they all see the same view.
     */
    private List<Member> membersOf(View view) {
        List<Member> members = new ArrayList<>(view.size());
        Set<String> ids = new HashSet<>();
        for (Address address : view.getMembers()) {
            MemberAddress.decode(address).ifPresentOrElse(m -> {
                if (ids.add(m.id())) {
                    members.add(m);
                } else {
                    log.warn("{}: view {} has id {} twice; ignoring the newer {}", self.id(), view.getViewId(),
                            m.id(), address);
                }
            }, () -> log.warn("{}: view {} member {} advertises no kvtier id/weight; ignored", self.id(),
                    view.getViewId(), address));
        }
        members.sort(Comparator.comparing(Member::id));
        return List.copyOf(members);
    }

    private void logChange(Snapshot previous, Snapshot next) {
        Set<String> before = ids(previous.members());
        Set<String> after = ids(next.members());
        List<String> joined = after.stream().filter(id -> !before.contains(id)).sorted().toList();
        List<String> left = before.stream().filter(id -> !after.contains(id)).sorted().toList();
        String leader = MemberAddress.decode(next.coordinator()).map(Member::id)
                .orElse(String.valueOf(next.coordinator()));
        log.info("{}: view {} led by {}: {} (joined {}, left {})", self.id(), next.viewId(), leader,
                next.members().stream().map(Member::id).toList(), joined, left);
    }

    private static Set<String> ids(List<Member> members) {
        Set<String> ids = new HashSet<>();
        members.forEach(m -> ids.add(m.id()));
        return ids;
    }
}
