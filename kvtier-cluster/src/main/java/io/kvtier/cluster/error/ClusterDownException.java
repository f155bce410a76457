package io.kvtier.cluster.error;

/** This node serves no keys now (not in the majority, fenced after a pause) or the slot has no primary. */
public final class ClusterDownException extends ClusterException {
    public ClusterDownException(String detail) {
        super(detail);
    }

    @Override
    public String code() {
        return "CLUSTERDOWN";
    }
}
