package io.kvtier.cluster.membership;

import io.kvtier.cluster.Member;
import java.util.Optional;
import org.jgroups.Address;
import org.jgroups.Message;
import org.jgroups.stack.Protocol;
import org.jgroups.util.MessageBatch;

/**
 * A JGroups protocol just above the transport that drops the messages a {@link LinkFilter} refuses: those received
 * from a peer it does not reach, and those sent to one (a multicast is dropped on receipt, by each receiver's own
 * filter). In the stack only when {@link ClusterOptions#links()} is set (in-JVM fault tests).
 */
final class FilteredLinks extends Protocol {
    private final LinkFilter filter;

    FilteredLinks(LinkFilter filter) {
        this.filter = filter;
    }

    @Override
    public Object down(Message msg) {
        Address dest = msg.getDest();
        if (dest != null && !reaches(dest)) {
            return null;
        }
        return down_prot.down(msg);
    }

    @Override
    public Object up(Message msg) {
        Address src = msg.getSrc();
        if (src != null && !reaches(src)) {
            return null;
        }
        return up_prot.up(msg);
    }

    @Override
    public void up(MessageBatch batch) {
        Address src = batch.sender();
        if (src != null && !reaches(src)) {
            return;
        }
        up_prot.up(batch);
    }

    private boolean reaches(Address address) {
        Optional<Member> peer = MemberAddress.decode(address);
        return peer.isEmpty() || filter.reaches(peer.get().id());
    }
}
