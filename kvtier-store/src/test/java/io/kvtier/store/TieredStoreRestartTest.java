package io.kvtier.store;

import static io.kvtier.store.TestStore.KiB;
import static io.kvtier.store.TestStore.MiB;
import static io.kvtier.store.TestStore.join;
import static io.kvtier.store.TestStore.key;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.store.memory.MemoryValue;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Exactness across close()+reopen and across a crash: no tier ever serves an overwritten or deleted value. */
class TieredStoreRestartTest {
    private static final int ABSENT = -1;

    @TempDir
    Path dir;

    @Test
    void clusterVersionsOfMemoryDiskAndDirectValuesSurviveARestart() throws IOException {
        byte[] big = Values.of("big", 1, (int) (2 * MiB));
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            join(s.putAsync("mem", Values.of("mem", 1, 100), PutOptions.PLAIN.withVersion(5L << 40 | 1)));
            assertThat(s.store.setVersion(key("mem"), 5L << 40 | 9)).as("raised").isTrue();
            assertThat(s.store.setVersion(key("mem"), 5L << 40 | 4)).as("never lowered").isFalse();
            join(s.putAsync("demoted", Values.of("demoted", 1, (int) (100 * KiB)),
                    PutOptions.PLAIN.withVersion(5L << 40 | 2)));
            s.pushToDisk("demoted");
            assertThat(s.store.setVersion(key("demoted"), 5L << 40 | 8)).isTrue(); // on disk already: not persisted
            var write = s.store.openDirectWrite(big.length);
            write.append(java.nio.ByteBuffer.wrap(big), () -> { });
            join(s.store.putDirect(key("big"), write, PutOptions.PLAIN.withVersion(5L << 40 | 3)));
            s.put("plain", Values.of("plain", 1, 10));
            assertThat(s.store.version(key("mem"))).isEqualTo(5L << 40 | 9);
            assertThat(s.store.version(key("demoted"))).isEqualTo(5L << 40 | 8);
            assertThat(s.store.version(key("absent"))).isEqualTo(-1);
        }
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            assertThat(s.store.version(key("mem"))).isEqualTo(5L << 40 | 9);
            assertThat(s.store.version(key("demoted"))).as("the version its record carries").isEqualTo(5L << 40 | 2);
            assertThat(s.store.version(key("big"))).isEqualTo(5L << 40 | 3);
            assertThat(s.store.version(key("plain"))).isZero();
            assertThat(s.store.maxRecoveredVersion()).isEqualTo(5L << 40 | 9);
            assertThat(s.read("big")).isEqualTo(big);
            Map<String, Long> listed = new HashMap<>();
            for (int b = 0; b < TieredStore.SCAN_BUCKETS; b++) {
                s.store.versionsInBucket(b, (k, v, expireAt, length) -> listed.put(new String(k), v));
            }
            assertThat(listed).containsEntry("mem", 5L << 40 | 9).containsEntry("big", 5L << 40 | 3)
                    .containsEntry("plain", 0L).hasSize(4 + (int) listed.keySet().stream()
                            .filter(k -> k.startsWith("filler-")).count());
        }
    }

    @Test
    void overwriteOfADemotedValueIsExactAcrossRestart() throws IOException {
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            s.put("k", Values.of("k", 1, (int) (100 * KiB)));
            s.pushToDisk("k");
            s.put("k", Values.of("k", 2, (int) (70 * KiB)));
            s.pushToDisk("k");
            s.put("k", Values.of("k", 3, (int) (90 * KiB)));
            assertThat(s.state("k")).isEqualTo(EntryState.MEMORY);
        }
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            assertThat(s.read("k")).isEqualTo(Values.of("k", 3, (int) (90 * KiB)));
        }
    }

    @Test
    void deleteOfADemotedValueIsExactAcrossRestart() throws IOException {
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            s.put("k", Values.of("k", 1, (int) (100 * KiB)));
            s.pushToDisk("k");
            assertThat(s.remove("k")).isTrue();
            assertThat(s.read("k")).isNull();
        }
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            assertThat(s.read("k")).isNull();
            s.put("other", Values.of("other", 1, 100));
        }
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            assertThat(s.read("k")).as("still deleted after a second restart").isNull();
            assertThat(s.read("other")).isEqualTo(Values.of("other", 1, 100));
        }
    }

    @Test
    void deleteOfAPromotedValueIsExactAcrossRestart() throws IOException {
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            s.put("k", Values.of("k", 1, (int) (64 * KiB)));
        }
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            s.read("k");
            s.read("k");
            assertThat(s.state("k")).as("promoted, still clean on disk").isEqualTo(EntryState.MEMORY);
            assertThat(s.remove("k")).isTrue();
        }
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            assertThat(s.read("k")).isNull();
        }
    }

    @Test
    void closeWritesMemoryOnlyValuesSoAReopenReturnsEverything() throws IOException {
        Map<String, byte[]> values = new LinkedHashMap<>();
        Random random = new Random(3);
        try (TestStore s = TestStore.open(dir, 16 * MiB, 64 * MiB)) {
            for (int i = 0; i < 40; i++) {
                String k = "key-" + i;
                byte[] v = i == 0 ? new byte[0] : Values.of(k, 1, 12 + random.nextInt((int) (200 * KiB)));
                values.put(k, v);
                s.put(k, v);
            }
            assertThat(s.stats().demotions()).isZero();
        }
        try (TestStore s = TestStore.open(dir, 16 * MiB, 64 * MiB)) {
            assertThat(s.store.recovery().records()).isEqualTo(values.size());
            assertThat(s.store.recovery().droppedRecords()).isZero();
            assertThat(s.store.size()).isEqualTo(values.size());
            values.forEach((k, v) -> assertThat(s.read(k)).as(k).isEqualTo(v));
            assertThat(s.stats().diskHits()).isEqualTo(values.size());
        }
    }

    @Test
    void aGracefulCloseIsRecordedAsCleanAndACrashAsNot() throws IOException {
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            s.put("a", Values.of("a", 1, 1000));
        }
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            assertThat(s.store.previousStopClean()).as("after close()").isTrue();
            assertThat(s.store.lostAtCrashKeys()).isZero();
            s.put("b", Values.of("b", 1, 1000));
            long deadline = System.nanoTime() + 5_000_000_000L; // the store's timer records its figures once a second
            while (System.nanoTime() < deadline && crashAccountKeys(dir) < 1) {
                Thread.onSpinWait();
            }
            s.store.crash();
        }
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            assertThat(s.store.previousStopClean()).as("after a crash").isFalse();
            assertThat(s.store.lostAtCrashKeys()).as("what the crash may have lost, stated").isPositive();
        }
    }

    /** The keys the store-state file says were only in memory (CrashAccount's layout: flag, millis, keys). */
    private static long crashAccountKeys(Path dir) throws IOException {
        Path f = dir.resolve(CrashAccount.FILE);
        byte[] b = Files.exists(f) ? Files.readAllBytes(f) : new byte[0];
        return b.length < 17 ? 0 : java.nio.ByteBuffer.wrap(b).getLong(9);
    }

    @Test
    void crashLeavesEveryKeyAtItsLastValueOrAbsent() throws IOException {
        Map<String, Integer> last = new HashMap<>();
        Path crashed = Files.createDirectory(dir.resolve("crashed"));
        Path data = Files.createDirectory(dir.resolve("data"));
        try (TestStore s = TestStore.open(data, 2 * MiB, 64 * MiB)) {
            Random random = new Random(11);
            Map<String, Integer> versions = new HashMap<>();
            List<CompletableFuture<?>> pending = new ArrayList<>();
            for (int op = 0; op < 300; op++) {
                String k = "key-" + random.nextInt(30);
                if (random.nextInt(100) < 20) {
                    pending.add(s.store.remove(key(k), false));
                    last.put(k, ABSENT);
                } else {
                    int v = versions.merge(k, 1, Integer::sum);
                    pending.add(s.putAsync(k, Values.of(k, v, (int) (16 * KiB) + random.nextInt((int) (112 * KiB))),
                            PutOptions.PLAIN));
                    last.put(k, v);
                }
            }
            pending.forEach(TestStore::join);
            assertThat(s.stats().demotions()).isPositive();
            copyWhileRunning(data, crashed);
            assertThat(s.stats().evictions()).isZero();
        }

        int survivors = 0;
        try (TestStore s = TestStore.open(crashed, 2 * MiB, 64 * MiB)) {
            for (var e : last.entrySet()) {
                byte[] bytes = s.read(e.getKey());
                if (bytes != null) {
                    assertThat(Values.check(e.getKey(), bytes)).as("version of %s", e.getKey())
                            .isEqualTo(e.getValue());
                    survivors++;
                }
            }
        }
        System.out.printf("after the crash %d of %d keys kept their last value, the rest are absent%n", survivors,
                last.values().stream().filter(v -> v != ABSENT).count());
        assertThat(survivors).as("values demoted before the crash survive it").isPositive();

        try (TestStore s = TestStore.open(data, 2 * MiB, 64 * MiB)) {
            for (var e : last.entrySet()) {
                byte[] bytes = s.read(e.getKey());
                if (e.getValue() == ABSENT) {
                    assertThat(bytes).as(e.getKey()).isNull();
                } else {
                    assertThat(bytes).as(e.getKey()).isNotNull();
                    assertThat(Values.check(e.getKey(), bytes)).as("version of %s", e.getKey()).isEqualTo(e.getValue());
                }
            }
        }
    }

    @Test
    void zeroLengthValueSurvivesDemotionAndRestart() throws IOException {
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            MemoryValue empty = join(s.store.allocate(0));
            join(s.store.put(key("empty"), empty, PutOptions.PLAIN));
            assertThat(s.read("empty")).isEmpty();
        }
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            assertThat(s.read("empty")).isEmpty();
            assertThat(s.store.length(key("empty"))).isZero();
        }
    }

    /** A crash image: the region files as they are while the store keeps running (a torn tail is possible). */
    private static void copyWhileRunning(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.list(from)) {
            for (Path f : files.toList()) {
                Files.copy(f, to.resolve(f.getFileName()));
            }
        }
    }
}
