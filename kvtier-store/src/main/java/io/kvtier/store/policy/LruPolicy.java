package io.kvtier.store.policy;

/** Least-recently-used order: the baseline S3-FIFO is compared against. Not thread-safe. */
public final class LruPolicy implements TierPolicy {
    private final NodeQueue queue = new NodeQueue(1);

    @Override
    public void add(PolicyNode node) {
        queue.addLast(node);
    }

    @Override
    public void remove(PolicyNode node) {
        if (queue.contains(node)) {
            queue.remove(node);
        }
    }

    @Override
    public PolicyNode nextVictim() {
        return queue.pollFirst();
    }

    @Override
    public boolean ordersOnTouch(PolicyNode node) {
        return true;
    }

    @Override
    public void touch(PolicyNode node) {
        if (queue.contains(node)) {
            queue.remove(node);
            queue.addLast(node);
        }
    }
}
