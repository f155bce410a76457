package io.kvtier.cluster.error;

/** The slot's primary is another node: the client should send the command to {@code owner} (host:port). */
public final class MovedException extends ClusterException {
    private final int slot;
    private final String owner;

    public MovedException(int slot, String owner) {
        super(slot + " " + owner);
        this.slot = slot;
        this.owner = owner;
    }

    public int slot() {
        return slot;
    }

    /** The primary's endpoint, host:port. */
    public String owner() {
        return owner;
    }

    @Override
    public String code() {
        return "MOVED";
    }
}
