package io.kvtier.client.cluster;

import io.kvtier.client.HostPort;
import io.kvtier.client.Reply;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a CLUSTER SLOTS reply: an array of {@code [start, end, [host, port, id...] primary, [host, port, id...]
 * replica...]}. A node entry with an empty host means "the host you asked" (Redis sends that when it does not know
 * its own address). Stateless.
 */
public final class ClusterSlots {
    private ClusterSlots() {
    }

    /**
     * The ranges of {@code reply}, as sent by {@code asked}.
     *
     * @throws IllegalArgumentException when the reply is an error (quoted) or not shaped like CLUSTER SLOTS
     */
    public static List<SlotRange> parse(Reply reply, HostPort asked) {
        if (reply instanceof Reply.Error(String message)) {
            throw new IllegalArgumentException(asked.host() + ":" + asked.port() + " answered CLUSTER SLOTS with '"
                    + message + "'");
        }
        List<SlotRange> ranges = new ArrayList<>();
        for (Reply entry : elements(reply, "the reply")) {
            List<Reply> e = elements(entry, "a slot range");
            if (e.size() < 3) {
                throw new IllegalArgumentException("a CLUSTER SLOTS range has " + e.size()
                        + " elements; expected start, end and at least the primary");
            }
            List<HostPort> replicas = new ArrayList<>();
            for (int i = 3; i < e.size(); i++) {
                replicas.add(node(e.get(i), asked));
            }
            ranges.add(new SlotRange(integer(e.get(0)), integer(e.get(1)), node(e.get(2), asked), replicas));
        }
        return ranges;
    }

    private static HostPort node(Reply reply, HostPort asked) {
        List<Reply> n = elements(reply, "a node");
        if (n.size() < 2 || !(n.get(0) instanceof Reply.Bulk host)) {
            throw new IllegalArgumentException("a CLUSTER SLOTS node is not [host, port, ...]: " + reply);
        }
        String h = host.utf8();
        return new HostPort(h.isEmpty() ? asked.host() : h, integer(n.get(1)));
    }

    private static List<Reply> elements(Reply reply, String what) {
        if (reply instanceof Reply.Aggregate(char type, List<Reply> elements) && type == '*') {
            return elements;
        }
        throw new IllegalArgumentException("CLUSTER SLOTS: " + what + " is not an array: " + reply);
    }

    private static int integer(Reply reply) {
        if (reply instanceof Reply.Int(long value) && value >= 0 && value <= Integer.MAX_VALUE) {
            return (int) value;
        }
        throw new IllegalArgumentException("CLUSTER SLOTS: expected a non-negative integer, got " + reply);
    }
}
