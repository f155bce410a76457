package io.kvtier.store;

import static io.kvtier.store.TestStore.KiB;
import static io.kvtier.store.TestStore.MiB;
import static io.kvtier.store.TestStore.key;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** KVC.PREFETCH's store half: disk to memory ahead of a read, never waiting for memory, counted used or wasted. */
class TieredStorePrefetchTest {
    @TempDir
    Path dir;

    private static ByteBuffer staging(int bytes) {
        return ByteBuffer.allocateDirect(bytes);
    }

    /** Puts {@code key} and pushes it to disk, then deletes the fillers that pushed it, so memory is free again. */
    private static void onDiskWithMemoryFree(TestStore s, String key, byte[] value) {
        s.put(key, value);
        s.pushToDisk(key);
        for (int i = 0; i < 1000; i++) {
            s.store.remove(key("filler-" + i), false).join();
        }
    }

    @Test
    void aPrefetchedValueIsInMemoryForItsReadAndCountsAsUsed() throws IOException {
        try (TestStore s = TestStore.open(dir, 8 * MiB, 64 * MiB)) {
            byte[] value = Values.of("cold", 1, (int) (256 * KiB));
            onDiskWithMemoryFree(s, "cold", value);
            long diskHits = s.stats().diskHits();

            assertThat(s.store.prefetch(key("cold"), 64 * MiB, TieredStorePrefetchTest::staging))
                    .isEqualTo(TieredStore.Prefetch.PROMOTED);
            assertThat(s.state("cold")).isEqualTo(EntryState.MEMORY);
            assertThat(s.stats().diskHits()).as("a prefetch is no read").isEqualTo(diskHits);
            assertThat(s.read("cold")).isEqualTo(value);
            assertThat(s.stats().prefetched()).isEqualTo(1);
            assertThat(s.stats().prefetchUsed()).isEqualTo(1);
            assertThat(s.read("cold")).isEqualTo(value);
            assertThat(s.stats().prefetchUsed()).as("once per prefetch").isEqualTo(1);

            assertThat(s.store.prefetch(key("cold"), 64 * MiB, TieredStorePrefetchTest::staging))
                    .isEqualTo(TieredStore.Prefetch.RESIDENT);
            assertThat(s.store.prefetch(key("absent"), 64 * MiB, TieredStorePrefetchTest::staging))
                    .isEqualTo(TieredStore.Prefetch.MISSING);
        }
    }

    @Test
    void aPrefetchedValueThatLeavesMemoryUnreadIsWasted() throws IOException {
        try (TestStore s = TestStore.open(dir, 8 * MiB, 64 * MiB)) {
            onDiskWithMemoryFree(s, "cold", Values.of("cold", 1, (int) (256 * KiB)));
            assertThat(s.store.prefetch(key("cold"), 64 * MiB, TieredStorePrefetchTest::staging))
                    .isEqualTo(TieredStore.Prefetch.PROMOTED);
            s.pushToDisk("cold");
            assertThat(s.stats().prefetchWasted()).isEqualTo(1);
            assertThat(s.stats().prefetchUsed()).isZero();
        }
    }

    @Test
    void aPrefetchNeverWaitsForMemoryAndTakesNothingOverItsLimit() throws IOException {
        try (TestStore s = TestStore.open(dir, 8 * MiB, 64 * MiB)) {
            s.put("cold", Values.of("cold", 1, (int) MiB));
            s.pushToDisk("cold");
            // What memory is free now taken (as by writes in progress): a prefetch does not wait for the demoter.
            java.util.List<io.kvtier.store.memory.MemoryValue> held = new java.util.ArrayList<>();
            for (io.kvtier.store.memory.MemoryValue v; (v = s.store.memory.allocate(64 * KiB)) != null; ) {
                held.add(v);
            }
            assertThat(s.store.prefetch(key("cold"), 64 * MiB, TieredStorePrefetchTest::staging))
                    .as("no room now").isEqualTo(TieredStore.Prefetch.NO_ROOM);
            held.forEach(io.kvtier.store.memory.MemoryValue::release);
            assertThat(s.state("cold")).isEqualTo(EntryState.DISK);
            for (int i = 0; i < 1000; i++) {
                s.store.remove(key("filler-" + i), false).join();
            }
            assertThat(s.store.prefetch(key("cold"), 512 * KiB, TieredStorePrefetchTest::staging))
                    .isEqualTo(TieredStore.Prefetch.TOO_LARGE);
            assertThat(s.stats().prefetched()).isZero();
            assertThat(s.store.prefetch(key("cold"), 64 * MiB, TieredStorePrefetchTest::staging))
                    .as("memory freed").isEqualTo(TieredStore.Prefetch.PROMOTED);
        }
    }
}
