package io.kvtier.store.policy;

/** A policy item for unit traces: a long key, its own fingerprint, and a fixed weight. */
final class TestNode extends ChainNode {
    final long key;
    private final long weight;

    /** The keys of the next {@code n} victims {@code policy} picks, in order. */
    static java.util.List<Long> victims(TierPolicy policy, int n) {
        java.util.List<Long> out = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(((TestNode) policy.nextVictim()).key);
        }
        return out;
    }

    TestNode(long key, long weight) {
        this.key = key;
        this.weight = weight;
    }

    TestNode(long key) {
        this(key, 1);
    }

    @Override
    public long weight() {
        return weight;
    }

    @Override
    public long fingerprint() {
        return key;
    }

    @Override
    public String toString() {
        return "node " + key;
    }
}
