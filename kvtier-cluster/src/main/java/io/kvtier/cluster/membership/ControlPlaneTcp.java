package io.kvtier.cluster.membership;

import java.util.Collection;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.jgroups.Address;
import org.jgroups.conf.ClassConfigurator;
import org.jgroups.protocols.TCP;

/**
 * JGroups' TCP transport, except that closing the connections to members a new view left out does not hold up the
 * view. TCP closes them on the thread that installs the view, and each close first writes a "graceful close" to the
 * peer: to a member cut off silently, whose socket buffer is full of unacknowledged sends, that write blocks until the
 * kernel gives up on the connection. A node that had excluded a cut-off member then took the next views 12 s late
 * (the nemesis "two-step cut"), and with them its return to the group after the heal. Here those closes run on a
 * thread of their own, in order. A close that comes late may drop a connection to a member that has come back
 * meanwhile; the next send connects again.
 *
 * <p>Wire-compatible with TCP: it uses TCP's protocol id, so its headers are TCP's.
 */
final class ControlPlaneTcp extends TCP {
    private final ExecutorService closer = Executors.newSingleThreadExecutor(
            Thread.ofPlatform().name("kvtier-tcp-close").daemon().factory());

    ControlPlaneTcp() {
        setId(ClassConfigurator.getProtocolId(TCP.class));
    }

    @Override
    public void retainAll(Collection<Address> members) {
        java.util.List<Address> keep = java.util.List.copyOf(members);
        try {
            closer.execute(() -> super.retainAll(keep));
        } catch (java.util.concurrent.RejectedExecutionException stopped) {
            // the transport is stopping: its connections close with it
        }
    }

    @Override
    public void destroy() {
        closer.shutdownNow();
        super.destroy();
    }
}
