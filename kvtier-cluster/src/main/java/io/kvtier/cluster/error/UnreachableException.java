package io.kvtier.cluster.error;

/** A forwarded command got no answer from its owner: it may or may not have run there. */
public final class UnreachableException extends ClusterException {
    public UnreachableException(String detail) {
        super(detail);
    }

    @Override
    public String code() {
        return "UNREACHABLE";
    }
}
