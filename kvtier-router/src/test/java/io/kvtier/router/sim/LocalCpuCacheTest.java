package io.kvtier.router.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.kvcache.key.LmcacheChunkKeys;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The engine-local CPU tier of the baselines: what it holds, what a load costs, what it reports. */
class LocalCpuCacheTest {
    private static final LmcacheChunkKeys KEYS = new LmcacheChunkKeys("m", 1, 0, "bfloat16", 16,
            LmcacheChunkKeys.Algorithm.BUILTIN, LmcacheChunkKeys.Algorithm.BUILTIN.seedZeroNoneHash());

    @Test
    void holdsTheMostRecentChunksUpToItsCapacityAndAPrefixLookupStopsAtTheFirstMiss() {
        LocalCpuCache c = new LocalCpuCache(List.of(KEYS), 1 << 20, 3 << 20, 1e12, 1.0);
        long[] h = {11, 12, 13, 14, 15};
        c.store(h, 0, 5); // 5 chunks of 1 MiB into 3 MiB: 13, 14, 15 stay
        assertThat(c.lookup(h)).as("chunk 11 is gone, so nothing from the start").isZero();
        assertThat(c.lookup(new long[] {13, 14, 15, 16})).isEqualTo(3);
        assertThat(c.load(h, 0, 2).ok()).as("evicted since").isFalse();
        assertThat(c.load(new long[] {13, 14}, 0, 2).ok()).isTrue();
        assertThat(c.bytesWritten()).isEqualTo(5L << 20);
        assertThat(c.bytesRead()).isEqualTo(2L << 20);
        c.store(new long[] {16}, 0, 1); // 13 and 14 were just read: 15 is the least recently used
        assertThat(c.lookup(new long[] {13, 14, 16})).isEqualTo(3);
        assertThat(c.lookup(new long[] {15})).isZero();
    }

    @Test
    void aLoadTakesItsRealBytesTimeAtTheLinkRateScaledAsTheEngineScalesItBack() {
        // 4 chunks of 2 MiB at 1 GB/s: 8.4 ms for the real bytes; a run moving a quarter of them sleeps a quarter
        LocalCpuCache c = new LocalCpuCache(List.of(KEYS), 2 << 20, 64 << 20, 1e9, 0.25);
        long[] h = {1, 2, 3, 4};
        c.store(h, 0, 4);
        long t0 = System.nanoTime();
        assertThat(c.load(h, 0, 4).ok()).isTrue();
        long took = System.nanoTime() - t0;
        assertThat(took).isGreaterThanOrEqualTo((long) (8L * (1 << 20) / 1e9 * 1e9 * 0.25));
        assertThat(c.bytesRead()).as("the bytes moved, a quarter of the real ones").isEqualTo(2L << 20);
    }
}
