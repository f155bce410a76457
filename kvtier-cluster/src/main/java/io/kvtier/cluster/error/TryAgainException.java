package io.kvtier.cluster.error;

/**
 * The command did not run and may simply be sent again: the slot table is changing, a key is being imported, or the
 * node asked could not even be reached.
 */
public final class TryAgainException extends ClusterException {
    public TryAgainException(String detail) {
        super(detail);
    }

    @Override
    public String code() {
        return "TRYAGAIN";
    }
}
