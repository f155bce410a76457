package io.kvtier.cluster.node;

import java.util.concurrent.atomic.LongAdder;

/**
 * A node's cluster counters since start, in one place: CLUSTER INFO, KVT.STATUS and the Prometheus metrics read them,
 * the routing, replication and import code count into them. Thread-safe.
 *
 * @param forwarded commands forwarded to their slot's primary for a cluster-unaware client
 * @param forwardFailures forwarded commands that got no reply
 * @param movedReplies -MOVED replies sent to cluster clients
 * @param replicated writes a backup acknowledged
 * @param replicationFailures replication calls refused or unanswered
 * @param fetchedKeys keys copied in while importing slots
 * @param fetchedBytes value bytes copied in while importing slots
 * @param refusedWrites writes refused with TRYAGAIN while the slot table changed
 * @param lateRequests peer writes refused because they arrived after their sender's deadline, or carried an older
 *                     state version than one applied here
 */
public record ClusterCounters(LongAdder forwarded, LongAdder forwardFailures, LongAdder movedReplies,
                              LongAdder replicated, LongAdder replicationFailures, LongAdder fetchedKeys,
                              LongAdder fetchedBytes, LongAdder refusedWrites, LongAdder lateRequests) {
    ClusterCounters() {
        this(new LongAdder(), new LongAdder(), new LongAdder(), new LongAdder(), new LongAdder(), new LongAdder(),
                new LongAdder(), new LongAdder(), new LongAdder());
    }
}
