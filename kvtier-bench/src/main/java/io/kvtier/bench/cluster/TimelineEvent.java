package io.kvtier.bench.cluster;

import java.util.Objects;

/**
 * Something that happened to the cluster during the failover run, drawn as a marker on the timeline. Immutable.
 *
 * @param seconds since the timeline's time 0
 * @param kind    what kind: {@link #KILL}, {@link #VIEW}, {@link #JOIN}, {@link #UP}, {@link #REBALANCED}
 * @param label   what the chart and the report say, e.g. "kill -9 n2" or "epoch 7: 2 nodes"
 */
public record TimelineEvent(double seconds, String kind, String label) {
    static final String KILL = "kill";
    static final String VIEW = "view";
    static final String JOIN = "join";
    static final String UP = "up";
    static final String REBALANCED = "rebalanced";

    public TimelineEvent {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(label, "label");
    }
}
