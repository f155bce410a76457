package io.kvtier.store.policy;

/** A policy item for unit traces: a long key, its own fingerprint, and a fixed weight. */
final class TestNode extends ChainNode {
    final long key;
    private final long weight;

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
