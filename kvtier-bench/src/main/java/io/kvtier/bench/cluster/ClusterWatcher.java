package io.kvtier.bench.cluster;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Polls CLUSTER INFO of the live nodes and turns what changes into timeline events: a new epoch or member count on
 * the observed node ("epoch 7: 2 nodes"), and, once per epoch, the moment every live node serves that epoch with no
 * slot left to import ("rebalanced"). One {@link #poll} per call; called from one thread (the scenario's poller).
 */
final class ClusterWatcher {
    private final LocalCluster cluster;
    private final Timeline timeline;
    private final Consumer<TimelineEvent> events;
    private long epoch = -1;
    private int members = -1;
    private long rebalancedEpoch = -1;

    ClusterWatcher(LocalCluster cluster, Timeline timeline, Consumer<TimelineEvent> events) {
        this.cluster = cluster;
        this.timeline = timeline;
        this.events = events;
    }

    /** Takes the current epoch as the starting point (no event for it). */
    void baseline() throws IOException {
        ClusterInfo info = info(cluster.first());
        epoch = info.epoch();
        members = info.knownNodes();
        rebalancedEpoch = epoch;
    }

    void poll() {
        long now = System.nanoTime();
        List<ClusterInfo> infos = new ArrayList<>();
        ClusterInfo observed = null;
        for (LocalCluster.Node n : cluster.live()) {
            try {
                ClusterInfo info = info(n);
                infos.add(info);
                observed = observed == null ? info : observed;
            } catch (IOException | IllegalStateException unreachable) {
                // dying, or still starting: the others tell the story
            }
        }
        if (observed == null) {
            return;
        }
        if (observed.epoch() != epoch || observed.knownNodes() != members) {
            epoch = observed.epoch();
            members = observed.knownNodes();
            events.accept(new TimelineEvent(timeline.seconds(now), TimelineEvent.VIEW, "epoch " + epoch + ": "
                    + members + " nodes"));
        }
        if (rebalancedEpoch != epoch && LocalCluster.agreed(infos, members) && infos.getFirst().epoch() == epoch) {
            rebalancedEpoch = epoch;
            events.accept(new TimelineEvent(timeline.seconds(now), TimelineEvent.REBALANCED, "rebalanced (epoch "
                    + epoch + ")"));
        }
    }

    private static ClusterInfo info(LocalCluster.Node n) throws IOException {
        return InfoProbe.clusterInfo(n.endpoint().host(), n.endpoint().port(), LocalCluster.PROBE_TIMEOUT);
    }
}
