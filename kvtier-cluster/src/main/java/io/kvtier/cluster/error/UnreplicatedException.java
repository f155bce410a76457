package io.kvtier.cluster.error;

/**
 * A write ran on the primary but its backups have not confirmed it within the peer timeout (--replication sync): it
 * stays invisible (its keys held) until they do, then it is kept; lost, never seen, if the primary fails first. Not
 * to be resent blindly: a read of the key waits for the outcome.
 */
public final class UnreplicatedException extends ClusterException {
    public UnreplicatedException(String detail) {
        super(detail);
    }

    @Override
    public String code() {
        return "UNREPLICATED";
    }
}
