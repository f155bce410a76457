package io.kvtier.store;

import static io.kvtier.store.TestStore.KiB;
import static io.kvtier.store.TestStore.MiB;
import static io.kvtier.store.TestStore.join;
import static io.kvtier.store.TestStore.key;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.store.memory.MemoryValue;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TieredStoreTest {
    @TempDir
    Path dir;

    @Test
    void putGetRemoveRoundTrip() throws IOException {
        try (TestStore s = TestStore.open(dir, 16 * MiB, 64 * MiB)) {
            byte[] small = Values.of("small", 1, 100);
            byte[] large = Values.of("large", 1, (int) (300 * KiB + 7));
            s.put("small", small);
            s.put("large", large);

            try (ValueRef ref = s.store.get(key("large"))) {
                assertThat(ref.inMemory()).isTrue();
                assertThat(ref.length()).isEqualTo(large.length);
                assertThat(ref.memory().toArray()).isEqualTo(large);
            }
            assertThat(s.read("small")).isEqualTo(small);
            assertThat(s.store.exists(key("small"))).isTrue();
            assertThat(s.store.length(key("large"))).isEqualTo(large.length);
            assertThat(s.store.size()).isEqualTo(2);

            assertThat(s.remove("small")).isTrue();
            assertThat(s.read("small")).isNull();
            assertThat(s.remove("small")).isFalse();
            assertThat(s.store.length(key("small"))).isEqualTo(-1);
            assertThat(s.stats().memoryHits()).isEqualTo(2);
            assertThat(s.stats().misses()).isEqualTo(1);
            assertThat(s.stats().keys()).isEqualTo(1);
        }
    }

    @Test
    void conditionalPutsFollowNxXxAndReturnTheOldValue() throws IOException {
        try (TestStore s = TestStore.open(dir, 16 * MiB, 64 * MiB)) {
            PutOptions nx = new PutOptions(0, PutOptions.Condition.IF_ABSENT, false, false);
            PutOptions xxGet = new PutOptions(0, PutOptions.Condition.IF_PRESENT, false, true);

            assertThat(join(s.putAsync("k", Values.of("k", 1, 50), xxGet)).written()).isFalse();
            assertThat(join(s.putAsync("k", Values.of("k", 2, 50), nx)).written()).isTrue();
            assertThat(join(s.putAsync("k", Values.of("k", 3, 50), nx)).written()).isFalse();
            PutResult replaced = join(s.putAsync("k", Values.of("k", 4, 50), xxGet));
            assertThat(replaced.written()).isTrue();
            try (ValueRef old = replaced.old()) {
                assertThat(s.bytes(old)).isEqualTo(Values.of("k", 2, 50));
            }
            assertThat(s.read("k")).isEqualTo(Values.of("k", 4, 50));
            assertThat(s.stats().memoryUsedBytes()).as("refused values were released").isEqualTo(64 * KiB);
        }
    }

    @Test
    void demotesColdEntriesWhenBudgetIsFull() throws IOException {
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            Map<String, byte[]> values = new LinkedHashMap<>();
            Random random = new Random(7);
            for (int i = 0; i < 60; i++) {
                String k = "key-" + i;
                byte[] v = Values.of(k, 1, (int) (64 * KiB + random.nextInt((int) (192 * KiB) + 1)));
                values.put(k, v);
                s.put(k, v);
                assertThat(s.stats().memoryUsedBytes()).isLessThanOrEqualTo(2 * MiB);
            }
            values.forEach((k, v) -> assertThat(s.read(k)).as(k).isEqualTo(v));

            StoreStats stats = s.stats();
            assertThat(stats.demotions()).isPositive();
            assertThat(stats.demotedBytes()).isPositive();
            assertThat(stats.diskHits()).isPositive();
            assertThat(stats.memoryHits() + stats.diskHits()).isEqualTo(60);
            assertThat(stats.misses()).isZero();
            assertThat(stats.evictions()).isZero();
            assertThat(stats.keys()).isEqualTo(60);
        }
    }

    @Test
    void keepsAHotKeyInMemoryWhileColdValuesStreamThrough() throws IOException {
        try (TestStore s = TestStore.open(dir, 4 * MiB, 64 * MiB)) {
            byte[] hot = Values.of("hot", 1, (int) (64 * KiB));
            s.put("hot", hot);
            for (int i = 0; i < 3; i++) {
                assertThat(s.read("hot")).isEqualTo(hot);
            }
            for (int i = 0; i < 100; i++) {
                s.put("cold-" + i, Values.of("cold-" + i, 1, (int) (128 * KiB)));
                assertThat(s.read("hot")).isEqualTo(hot);
            }
            StoreStats stats = s.stats();
            System.out.printf("hot key while streaming 100 cold values through 4 MiB: %d memory hits, %d disk hits,"
                    + " %d demotions%n", stats.memoryHits(), stats.diskHits(), stats.demotions());
            assertThat(stats.demotions()).isGreaterThanOrEqualTo(60);
            assertThat(stats.diskHits()).as("reads of the hot key served from disk").isZero();
            assertThat(s.state("hot")).isEqualTo(EntryState.MEMORY);
        }
    }

    @Test
    void promotesAValueToMemoryOnItsSecondDiskHit() throws IOException {
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            byte[] value = Values.of("a", 1, (int) (64 * KiB));
            s.put("a", value);
            s.pushToDisk("a");
            TestStore.await("the demoter made room", () -> s.freeMemory() >= 2 * 64 * KiB);

            for (int hit = 1; hit <= 2; hit++) {
                try (ValueRef ref = s.store.get(key("a"))) {
                    assertThat(ref.inMemory()).as("hit %d", hit).isFalse();
                    assertThat(s.bytes(ref)).isEqualTo(value);
                }
            }
            assertThat(s.stats().promotions()).isEqualTo(1);
            try (ValueRef ref = s.store.get(key("a"))) {
                assertThat(ref.inMemory()).isTrue();
                assertThat(ref.memory().toArray()).isEqualTo(value);
            }
            assertThat(s.stats().diskHits()).isEqualTo(2);
        }
    }

    @Test
    void aNoTouchReadNeitherPromotesNorCountsTowardPromotion() throws IOException {
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            byte[] value = Values.of("a", 1, (int) (64 * KiB));
            s.put("a", value);
            s.pushToDisk("a");
            TestStore.await("the demoter made room", () -> s.freeMemory() >= 2 * 64 * KiB);

            for (int read = 0; read < 3; read++) { // CLIENT NO-TOUCH: an observer's reads (the router's fetch probes)
                try (ValueRef ref = s.store.get(key("a"), false)) {
                    assertThat(ref.inMemory()).isFalse();
                    assertThat(s.bytes(ref)).isEqualTo(value);
                }
            }
            assertThat(s.stats().promotions()).isZero();
            assertThat(s.state("a")).isEqualTo(EntryState.DISK);
            for (int hit = 1; hit <= 2; hit++) { // the first ordinary hit is still the first
                try (ValueRef ref = s.store.get(key("a"))) {
                    assertThat(ref.inMemory()).as("hit %d", hit).isFalse();
                    assertThat(s.bytes(ref)).isEqualTo(value);
                }
            }
            assertThat(s.stats().promotions()).isEqualTo(1);
        }
    }

    @Test
    void readerKeepsItsBytesWhileTheKeyIsOverwrittenOrDemoted() throws IOException {
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            byte[] v1 = Values.of("k", 1, (int) (200 * KiB));
            s.put("k", v1);
            try (ValueRef held = s.store.get(key("k"))) {
                s.put("k", Values.of("k", 2, (int) (200 * KiB)));
                s.pushToDisk("k");
                assertThat(held.memory().toArray()).isEqualTo(v1);
            }
            try (ValueRef held = s.store.get(key("k"))) {
                assertThat(held.inMemory()).isFalse();
                assertThat(s.remove("k")).isTrue();
                assertThat(s.bytes(held)).isEqualTo(Values.of("k", 2, (int) (200 * KiB)));
            }
            assertThat(s.read("k")).isNull();
        }
    }

    @Test
    void allocateRefusesValuesThatCanNeverBeHeldInMemory() throws IOException {
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            assertThat(s.store.bypassesMemory(MiB)).isFalse();
            assertThat(s.store.bypassesMemory(MiB + 1)).as("more than half the memory budget").isTrue();
            assertThatThrownBy(() -> s.store.allocate(MiB + 1)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("openDirectWrite");
            assertThatThrownBy(() -> s.store.tryAllocate(MiB + 1)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> s.store.allocate(64 * MiB + 1)).isInstanceOf(StoreFullException.class)
                    .hasMessageContaining("maximum value size");
            MemoryValue half = join(s.store.allocate(MiB));
            half.release();
            assertThat(s.stats().memoryUsedBytes()).isZero();
        }
    }

    @Test
    void putOfAPartlyWrittenValueIsRefused() throws IOException {
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            MemoryValue v = join(s.store.allocate(100));
            v.write(new byte[40]);
            assertThatThrownBy(() -> s.store.put(key("k"), v, PutOptions.PLAIN))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThat(s.stats().memoryUsedBytes()).isZero();
            assertThat(s.store.size()).isZero();
        }
    }

    @Test
    void clearEmptiesEverythingAndDeletesRegionFiles() throws IOException {
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            for (int i = 0; i < 30; i++) {
                s.put("key-" + i, Values.of("key-" + i, 1, (int) (128 * KiB)));
            }
            assertThat(s.stats().demotions()).isPositive();
            assertThat(regionFiles()).isNotZero();

            join(s.store.clear());

            assertThat(s.store.size()).isZero();
            assertThat(s.read("key-0")).isNull();
            assertThat(s.read("key-29")).isNull();
            assertThat(regionFiles()).isZero();
            StoreStats stats = s.stats();
            assertThat(stats.memoryUsedBytes()).as("no memory leaked").isZero();
            assertThat(stats.diskUsedBytes()).isZero();
            assertThat(stats.memoryEntries()).isZero();
            assertThat(stats.diskEntries()).isZero();

            s.put("after", Values.of("after", 1, 1000));
        }
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            assertThat(s.store.size()).isEqualTo(1);
            assertThat(s.read("after")).isEqualTo(Values.of("after", 1, 1000));
            assertThat(s.read("key-0")).isNull();
        }
    }

    private long regionFiles() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().endsWith(".kvr")).count();
        }
    }
}
