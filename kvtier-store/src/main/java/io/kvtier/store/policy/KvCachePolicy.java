package io.kvtier.store.policy;

/*
 * The memory tier's eviction order (issue 30): S3-FIFO for small values, least-recently-used for KV-cache chunks.
 *
 * Why not S3-FIFO for everything. A KV-cache chunk (LMCache's 256 tokens, 1 to 64 MiB) is written once and read when
 * its conversation comes back, minutes later: a median 4% of the trace's unique chunks later on Mooncake's
 * conversation trace, p90 17%. S3-FIFO's probation queue (10% of memory) drops most of them before that, unread, and
 * loses 3 points of hit rate to plain LRU at 10% and 20% of the unique chunks in memory (docs/simulate.md). A
 * frequency CLOCK in their place (S3-FIFO's main queue, or one bit of it) is not LRU either: 1.3 to 1.9 points under
 * it at 10% on Mooncake's synthetic trace, because a prompt's lookup reads its chunks together and LRU moves them
 * together, where CLOCK leaves them in their old places.
 *
 * Why not LRU for everything. Small values are what Redis clients keep, and S3-FIFO's point there stands: a one-pass
 * scan of cold keys churns the probation queue only, and the hot set in main stays put; hits are a lock-free counter.
 *
 * So a value of at least LARGE_BYTES skips probation and ghosts, enters main at the tail with no frequency, and a hit
 * moves it back to the tail (under the policy lock, which the store tries without waiting: when it is busy the hit
 * is counted as S3-FIFO counts it, and main's sweep gives the chunk another round instead). With only chunks in memory
 * this is LRU; with only small values it is S3-FIFO; mixed, both share main and the small queue holds small values
 * on probation, up to its 10%. KV-cache chunks are well above 64 KiB (a 16-token vLLM block of Qwen2.5-0.5B is
 * 192 KiB; a 256-token LMCache chunk of Llama-3.1-8B 32 MiB), Redis values seldom reach it. LMCache's small metadata values that
 * sit next to each chunk are small values: leaving memory first, they are read from the disk tier (a few hundred
 * bytes), not lost.
 *
 * What no order here buys: Belady's policy with admission reaches the conversation trace's ceiling at 5% of its
 * chunks in memory, because 76% of chunks are never read again and which ones is all or nothing per request (94% of
 * blocks belong to requests whose new chunks are all re-read or none). No signal the store sees predicts that well;
 * a hint from the router or the engine would (docs/simulate.md: a hint right 9 times in 10 gives +5 points at 10%).
 *
 * "Leaves the tier" means demotion to the disk tier, not loss.
 */
/** S3-FIFO for small values, LRU for values of {@link #LARGE_BYTES} or more: see the essay above. Not thread-safe. */
public final class KvCachePolicy extends S3FifoPolicy {
    /** Values at least this large are ordered least-recently-used: KV-cache chunks. */
    public static final long LARGE_BYTES = 64 << 10;

    /** @param capacity bytes the tier holds; the probation queue gets 10% of it */
    public KvCachePolicy(long capacity, int maxGhosts) {
        super(capacity, maxGhosts);
    }

    /** Whether {@code node} is ordered by recency: a hit should be handed to {@link #touch} under the lock. */
    @Override
    public boolean ordersOnTouch(PolicyNode node) {
        return node.weight() >= LARGE_BYTES;
    }

    @Override
    public void add(PolicyNode node) {
        if (ordersOnTouch(node)) {
            node.freq(0);
            main.addLast(node);
        } else {
            super.add(node);
        }
    }

    @Override
    public void touch(PolicyNode node) {
        if (ordersOnTouch(node) && main.contains(node)) {
            main.remove(node);
            main.addLast(node);
        } else {
            node.recordAccess();
        }
    }
}
