package io.kvtier.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.store.memory.MemoryValue;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Heap bytes per small key (16-byte key, 8-byte value) in the index of a real {@link TieredStore}: the heap in use
 * after a full GC, before and after writing {@value #KEYS} keys, divided by the count. Measured once with every value
 * in memory and once after a restart, with every value on disk. The figures are printed (they are the ones quoted in
 * README "Limits"); the assertions hold them under {@link IndexBudget#charge}, what the metadata budget charges per
 * key, so the budget cannot undercount what a key costs. Run:
 * {@code ./mvnw -pl kvtier-store -am verify -Dtest=IndexFootprintTest -Dsurefire.failIfNoSpecifiedTests=false}
 */
class IndexFootprintTest {
    static final int KEYS = 200_000;

    @TempDir
    Path dir;

    @Test
    void aSmallKeyCostsAtMostTheChargedOverheadInMemoryAndAfterARestart() throws IOException {
        double inMemory;
        double onDisk;
        try (TestStore warmUp = TestStore.open(dir.resolve("warm-up"), 16 * TestStore.MiB, 64 * TestStore.MiB)) {
            warmUp.put("k", new byte[8]); // loads the store's classes before the baseline
        }
        long before = usedHeap();
        try (TestStore s = TestStore.open(dir, 64 * TestStore.MiB, 256 * TestStore.MiB)) {
            for (int i = 0; i < KEYS; i++) {
                MemoryValue v = s.store.tryAllocate(8);
                v.write(new byte[8]);
                s.store.put(key(i), v, PutOptions.PLAIN).join();
            }
            inMemory = (usedHeap() - before) / (double) KEYS;
        }
        try (TestStore s = TestStore.open(dir, 64 * TestStore.MiB, 256 * TestStore.MiB)) {
            assertThat(s.store.size()).isEqualTo(KEYS);
            onDisk = (usedHeap() - before) / (double) KEYS;
        }
        System.out.printf("index heap per 16-byte key with an 8-byte value: %.1f B in memory, %.1f B on disk%n",
                inMemory, onDisk);
        assertThat(inMemory).isPositive().isLessThanOrEqualTo(IndexBudget.charge(16));
        assertThat(onDisk).isPositive().isLessThanOrEqualTo(IndexBudget.charge(16));
    }

    static byte[] key(int i) {
        return String.format("key:%012d", i).getBytes(StandardCharsets.US_ASCII);
    }

    static long usedHeap() {
        Runtime rt = Runtime.getRuntime();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 4; i++) {
            System.gc();
            used = Math.min(used, rt.totalMemory() - rt.freeMemory());
        }
        return used;
    }
}
