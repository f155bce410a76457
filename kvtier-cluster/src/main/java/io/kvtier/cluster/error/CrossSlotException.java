package io.kvtier.cluster.error;

/** A multi-key command, transaction or script names keys of more than one slot. */
public final class CrossSlotException extends ClusterException {
    public CrossSlotException() {
        super("Keys in request don't hash to the same slot");
    }

    @Override
    public String code() {
        return "CROSSSLOT";
    }
}
