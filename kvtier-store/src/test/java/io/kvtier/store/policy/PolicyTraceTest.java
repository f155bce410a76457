package io.kvtier.store.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * A small trace simulator in the spirit of Caffeine's: replays one access trace against a cache of fixed capacity
 * that evicts through {@link TierPolicy#nextVictim()}, and compares how much of a hot set each policy keeps.
 */
class PolicyTraceTest {
    private static final int CAPACITY = 1000;
    private static final int HOT = 200;
    private static final int SCAN = 10_000;
    private static final int COLD_PER_HOT_ACCESS = 20;

    @Test
    void s3FifoKeepsTheHotSetThroughAOnePassScanWhileLruLosesIt() {
        double s3fifo = hotSetResidentAfterScan(() -> new S3FifoPolicy(CAPACITY, CAPACITY));
        double lru = hotSetResidentAfterScan(LruPolicy::new);
        System.out.printf("hot set resident after a %d-item scan (capacity %d, hot set %d): S3-FIFO %.1f%%,"
                + " LRU %.1f%%%n", SCAN, CAPACITY, HOT, 100 * s3fifo, 100 * lru);

        assertThat(s3fifo).isGreaterThanOrEqualTo(0.90);
        assertThat(lru).isLessThan(0.50);
    }

    /** Warms a hot set, then scans cold items once with a hot access every few; returns the hot fraction kept. */
    private static double hotSetResidentAfterScan(Supplier<TierPolicy> policy) {
        SimulatedCache cache = new SimulatedCache(policy.get(), CAPACITY);
        Random random = new Random(42);
        List<Long> hot = new ArrayList<>();
        for (long k = 0; k < HOT; k++) {
            hot.add(k);
        }
        for (int round = 0; round < 5; round++) {
            Collections.shuffle(hot, random);
            hot.forEach(cache::access);
        }
        for (int i = 0; i < SCAN; i++) {
            cache.access(1_000_000L + i);
            if (i % COLD_PER_HOT_ACCESS == 0) {
                cache.access(hot.get(random.nextInt(HOT)));
            }
        }
        return (double) hot.stream().filter(cache::contains).count() / HOT;
    }

    /** A cache of {@code capacity} weight units: a miss inserts, and victims leave while over capacity. */
    private static final class SimulatedCache {
        private final TierPolicy policy;
        private final long capacity;
        private final Map<Long, TestNode> resident = new HashMap<>();
        private long weight;

        SimulatedCache(TierPolicy policy, long capacity) {
            this.policy = policy;
            this.capacity = capacity;
        }

        void access(long key) {
            TestNode node = resident.get(key);
            if (node != null) {
                policy.touch(node);
                return;
            }
            node = new TestNode(key);
            resident.put(key, node);
            policy.add(node);
            weight += node.weight();
            while (weight > capacity) {
                TestNode victim = (TestNode) policy.nextVictim();
                assertThat(victim).as("a victim while over capacity").isNotNull();
                assertThat(victim.isQueued()).isFalse();
                resident.remove(victim.key);
                weight -= victim.weight();
            }
        }

        boolean contains(long key) {
            return resident.containsKey(key);
        }
    }
}
