package io.kvtier.store.policy;


/*
 * S3-FIFO (Yang et al., "FIFO queues are all you need for cache eviction", SOSP 2023), weighted by bytes.
 *
 * New items enter a small probationary FIFO (10% of capacity). When it overflows, its head either moves to the main
 * FIFO (it was hit while on probation) or leaves the tier, its key remembered in a ghost FIFO. An item whose key is a
 * ghost is admitted straight to main. Main's head is reinserted at the tail while its frequency (0..3) is positive,
 * decrementing it, else it leaves. A one-pass scan therefore only churns the small queue: scanned items are never
 * hit twice, never reach main, and the hot set in main stays put. Hits just bump a counter, with no lock and no list
 * movement, which is what makes the policy cheap on the read path.
 *
 * "Leaves the tier" here means demotion to the disk tier, not loss.
 */
/**
 * Scan-resistant S3-FIFO eviction order, weighted by bytes; see the essay above. Not thread-safe. Sealed:
 * {@link KvCachePolicy} (the store's) and {@link ChainPolicy} extend it, changing where items enter main.
 */
public sealed class S3FifoPolicy implements TierPolicy permits ChainPolicy, KvCachePolicy {
    private final long capacity;
    final NodeQueue small = new NodeQueue(1);
    final NodeQueue main = new NodeQueue(2);
    private final GhostSet ghosts;

    /** @param capacity bytes the tier holds; the small queue gets 10% of it */
    public S3FifoPolicy(long capacity, int maxGhosts) {
        this.capacity = capacity;
        this.ghosts = new GhostSet(maxGhosts);
    }

    @Override
    public void add(PolicyNode node) {
        node.freq(0);
        if (admitsGhost(node)) {
            toMain(node);
        } else {
            small.addLast(node);
        }
    }

    /** Whether {@code node}'s key was evicted from probation lately (forgetting it: a ghost admits once). */
    final boolean admitsGhost(PolicyNode node) {
        return ghosts.remove(node.fingerprint());
    }

    /** Puts {@code node} at main's tail: a ghost's admission, a promotion from probation, a reinsertion. */
    void toMain(PolicyNode node) {
        main.addLast(node);
    }

    @Override
    public void remove(PolicyNode node) {
        if (small.contains(node)) {
            small.remove(node);
        } else if (main.contains(node)) {
            main.remove(node);
        }
    }

    @Override
    public PolicyNode nextVictim() {
        while (!small.isEmpty() || !main.isEmpty()) {
            if (!small.isEmpty() && (small.weight() >= capacity / 10 || main.isEmpty())) {
                PolicyNode node = small.pollFirst();
                if (node.freq() > 0) {
                    node.freq(0);
                    toMain(node);
                } else {
                    rememberGhost(node);
                    return node;
                }
            } else {
                PolicyNode node = main.pollFirst();
                if (node.freq() > 0) {
                    node.freq(node.freq() - 1);
                    toMain(node);
                } else {
                    return node;
                }
            }
        }
        return null;
    }

    private void rememberGhost(PolicyNode node) {
        ghosts.add(node.fingerprint());
    }

    /** Bytes in the probationary queue (tests). */
    long smallWeight() {
        return small.weight();
    }

    /** Bytes in the main queue (tests). */
    long mainWeight() {
        return main.weight();
    }
}
