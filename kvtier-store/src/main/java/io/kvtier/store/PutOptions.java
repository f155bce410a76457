package io.kvtier.store;

/**
 * How a put behaves, mirroring Redis SET's options: expiry (epoch millis, 0 = none), NX/XX condition, KEEPTTL, and
 * GET (return the old value).
 */
public record PutOptions(long expireAt, Condition condition, boolean keepTtl, boolean returnOld) {
    public static final PutOptions PLAIN = new PutOptions(0, Condition.ALWAYS, false, false);

    /** When a put applies. */
    public enum Condition { ALWAYS, IF_ABSENT, IF_PRESENT }

    public PutOptions {
        if (expireAt < 0) {
            throw new IllegalArgumentException("expiry " + expireAt + " is negative");
        }
        if (keepTtl && expireAt != 0) {
            throw new IllegalArgumentException("KEEPTTL and an expiry exclude each other");
        }
    }
}
