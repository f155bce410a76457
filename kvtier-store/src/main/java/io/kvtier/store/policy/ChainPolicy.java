package io.kvtier.store.policy;

/*
 * S3-FIFO for KV-cache chunks (issue 30): a candidate for the memory tier, compared in `kvtier simulate --policy`;
 * the store runs S3FifoPolicy until one meets docs/simulate.md's targets and the store learns chains.
 *
 * What plain S3-FIFO gets wrong for LMCache's chunks. A prompt's chunks are looked up in order and the lookup stops
 * at the first one missing, so chunk k is worth nothing without chunks 0..k-1. Two things followed:
 *  - A chunk is written once and read when its conversation comes back, minutes later. S3-FIFO puts every new item
 *    on a small probation queue (10% of memory) and drops those not read before it overflows: most chunks left
 *    memory before their conversation returned (Mooncake's conversation trace at 10% of its blocks in memory: 25.3%
 *    of blocks hit, plain LRU 27.8%).
 *  - Any FIFO or LRU order that follows the order of writes or reads evicts a prompt's first chunks before its last
 *    ones: the first are the oldest. One evicted head makes the whole rest of the chain unreachable.
 *
 * So, for items the caller links into chains (ChainNode.parent: the chunk before, learned from the order a client
 * reads and writes them):
 *  - A chunk with a parent skips probation and goes to main; its parent, if still on probation, is promoted to main
 *    at that moment (it heads a chain now).
 *  - In main, a chunk is placed just before its parent (nearer the eviction end) when its parent was placed within
 *    the last WINDOW placements, that is, by the same request's writes: a request's new chunks sit in main as
 *    [last ... first] ahead of their parent, and the main queue's sweep meets a chain's tail first. A parent placed
 *    long ago (an earlier turn, read again since) keeps its place, to be reinserted at the tail by the sweep for its
 *    reads; the new chunks go to the tail before it, still ahead of it in the sweep's order.
 *  - Main's sweep is S3-FIFO's (reinsert while the frequency 0..3 is positive, decrementing it), which keeps a swept
 *    run of one chain in order: deeper chunks, read less often, go first.
 * Items without chain links (plain keys, a chain's head before any child) are S3-FIFO's as before: probation, ghost
 * admission, and with them its scan resistance. Hits stay a lock-free counter.
 *
 * "Leaves the tier" means demotion to the disk tier, not loss.
 */
/** S3-FIFO with KV-cache chains: see the essay above. Not thread-safe. */
public final class ChainPolicy extends S3FifoPolicy {
    /** Placements within which a parent counts as placed by the same request's writes. */
    static final int WINDOW = 64;

    private int placements;

    /** @param capacity bytes the tier holds; the probation queue gets 10% of it */
    public ChainPolicy(long capacity, int maxGhosts) {
        super(capacity, maxGhosts);
    }

    @Override
    public void add(PolicyNode node) {
        node.freq(0);
        PolicyNode parent = node instanceof ChainNode c ? c.parent : null;
        if (parent != null && parent.queue != 0) {
            if (small.contains(parent)) {
                small.remove(parent);
                toMain(parent);
            }
            if (parent instanceof ChainNode p && placements - p.placed < WINDOW) {
                main.addBefore(node, parent);
                placed(node);
            } else {
                toMain(node);
            }
        } else if (admitsGhost(node) || parent != null) {
            toMain(node);
        } else {
            small.addLast(node);
        }
    }

    @Override
    void toMain(PolicyNode node) {
        main.addLast(node);
        placed(node);
    }

    private void placed(PolicyNode node) {
        ++placements;
        if (node instanceof ChainNode c) {
            c.placed = placements;
        }
    }
}
