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

    /** Whether a peer's error reply {@code error} (its text, code first) is this kind: safe to resend. */
    public static boolean isReply(String error) {
        return error.equals("TRYAGAIN") || error.startsWith("TRYAGAIN ");
    }
}
