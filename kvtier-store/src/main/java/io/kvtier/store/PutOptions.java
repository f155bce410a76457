package io.kvtier.store;

/**
 * How a put behaves, mirroring Redis SET's options: expiry (epoch millis, 0 = none), NX/XX condition, KEEPTTL, and
 * GET (return the old value); and the cluster version the new value carries (0 outside a cluster, see
 * {@link ValueRef#version()}).
 */
public record PutOptions(long expireAt, Condition condition, boolean keepTtl, boolean returnOld, long version) {
    public static final PutOptions PLAIN = new PutOptions(0, Condition.ALWAYS, false, false);

    /** Options of a value without a cluster version. */
    public PutOptions(long expireAt, Condition condition, boolean keepTtl, boolean returnOld) {
        this(expireAt, condition, keepTtl, returnOld, 0);
    }

    /** These options with cluster version {@code v}. */
    public PutOptions withVersion(long v) {
        return v == version ? this : new PutOptions(expireAt, condition, keepTtl, returnOld, v);
    }

    /** When a put applies. */
    public enum Condition { ALWAYS, IF_ABSENT, IF_PRESENT }

    public PutOptions {
        if (expireAt < 0) {
            throw new IllegalArgumentException("expiry " + expireAt + " is negative");
        }
        if (version < 0) {
            throw new IllegalArgumentException("cluster version " + version + " is negative");
        }
        if (keepTtl && expireAt != 0) {
            throw new IllegalArgumentException("KEEPTTL and an expiry exclude each other");
        }
    }
}
