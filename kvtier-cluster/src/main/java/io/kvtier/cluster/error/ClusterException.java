package io.kvtier.cluster.error;

/**
 * Why the cluster cannot run a command here and now, as a type rather than a string: the server turns each kind into
 * its Redis Cluster error in one place (the dispatcher), and code that reacts to one (a retry on TRYAGAIN, a redirect
 * on MOVED) tests the type. The message is the error's detail, without the Redis error code.
 */
public abstract sealed class ClusterException extends RuntimeException
        permits MovedException, TryAgainException, ClusterDownException, CrossSlotException, UnreplicatedException,
        UnreachableException {
    protected ClusterException(String detail) {
        super(detail, null, false, false); // flow control, not a fault: no stack trace to fill
    }

    /** The Redis error code clients match on: MOVED, TRYAGAIN, CLUSTERDOWN, CROSSSLOT, UNREPLICATED, UNREACHABLE. */
    public abstract String code();

    /** The whole error reply text: code, then detail. */
    public String redisError() {
        return getMessage().isEmpty() ? code() : code() + " " + getMessage();
    }
}
