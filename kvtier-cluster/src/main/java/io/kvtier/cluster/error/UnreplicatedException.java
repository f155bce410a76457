package io.kvtier.cluster.error;

/**
 * A write ran on the primary but a backup did not acknowledge it (--sync-replication): not acknowledged to the
 * client, and not to be resent blindly.
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
