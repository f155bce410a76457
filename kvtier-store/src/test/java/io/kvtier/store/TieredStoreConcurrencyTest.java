package io.kvtier.store;

import static io.kvtier.store.TestStore.KiB;
import static io.kvtier.store.TestStore.MiB;
import static io.kvtier.store.TestStore.join;
import static io.kvtier.store.TestStore.key;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TieredStoreConcurrencyTest {
    private static final int WRITERS = 2;
    private static final int READERS = 2;
    private static final int KEYS_PER_WRITER = 20;
    private static final int OPS_PER_WRITER = 150;
    private static final int ABSENT = -1;

    @TempDir
    Path dir;

    @Test
    void concurrentReadersAndWritersNeverSeeWrongBytes() throws Exception {
        Map<String, Integer> last = new ConcurrentHashMap<>();
        AtomicBoolean writing = new AtomicBoolean(true);
        LongAdder reads = new LongAdder();
        ExecutorService pool = Executors.newFixedThreadPool(WRITERS + READERS);
        try (TestStore s = TestStore.open(dir, 2 * MiB, 64 * MiB)) {
            List<Future<?>> writers = new ArrayList<>();
            for (int w = 0; w < WRITERS; w++) {
                int id = w;
                writers.add(pool.submit(() -> write(s, id, last)));
            }
            List<Future<?>> readers = new ArrayList<>();
            for (int r = 0; r < READERS; r++) {
                long seed = 100 + r;
                readers.add(pool.submit(() -> read(s, seed, writing, reads)));
            }
            for (Future<?> f : writers) {
                f.get(60, TimeUnit.SECONDS);
            }
            writing.set(false);
            for (Future<?> f : readers) {
                f.get(60, TimeUnit.SECONDS);
            }

            for (var e : last.entrySet()) {
                byte[] bytes = s.read(e.getKey());
                if (e.getValue() == ABSENT) {
                    assertThat(bytes).as(e.getKey()).isNull();
                } else {
                    assertThat(bytes).as(e.getKey()).isNotNull();
                    assertThat(Values.check(e.getKey(), bytes)).as(e.getKey()).isEqualTo(e.getValue());
                }
            }
            StoreStats stats = s.stats();
            System.out.printf("concurrent run: %d checked reads, %d memory hits, %d disk hits, %d promotions,"
                            + " %d demotions%n", reads.sum(), stats.memoryHits(), stats.diskHits(),
                    stats.promotions(), stats.demotions());
            assertThat(reads.sum()).isPositive();
            assertThat(stats.diskHits()).isPositive();
            assertThat(stats.corruptReads()).isZero();
            assertThat(stats.evictions()).isZero();

            join(s.store.clear());
            assertThat(s.stats().memoryUsedBytes()).as("no value leaked a reference").isZero();
            assertThat(s.stats().waitingBytes()).isZero();
        } finally {
            pool.shutdownNow();
        }
    }

    /** Writer {@code id} owns keys id, id + WRITERS, ...: puts rising versions and sometimes deletes. */
    private static void write(TestStore s, int id, Map<String, Integer> last) {
        Random random = new Random(id);
        Map<String, Integer> versions = new HashMap<>();
        for (int op = 0; op < OPS_PER_WRITER; op++) {
            String k = "key-" + (random.nextInt(KEYS_PER_WRITER) * WRITERS + id);
            if (random.nextInt(10) == 0) {
                s.remove(k);
                last.put(k, ABSENT);
            } else {
                int v = versions.merge(k, 1, Integer::sum);
                s.put(k, Values.of(k, v, (int) (8 * KiB) + random.nextInt((int) (88 * KiB))));
                last.put(k, v);
            }
        }
    }

    /** Reads random keys from either tier, checking every byte and that versions never go back. */
    private static void read(TestStore s, long seed, AtomicBoolean writing, LongAdder reads) {
        Random random = new Random(seed);
        Map<String, Integer> seen = new HashMap<>();
        while (writing.get()) {
            String k = "key-" + random.nextInt(KEYS_PER_WRITER * WRITERS);
            try (ValueRef ref = s.store.get(key(k))) {
                if (ref == null) {
                    continue;
                }
                byte[] bytes = s.bytes(ref);
                assertThat((long) bytes.length).isEqualTo(ref.length());
                int version = Values.check(k, bytes);
                Integer before = seen.put(k, version);
                assertThat(version).as("version of %s", k).isGreaterThanOrEqualTo(before == null ? 0 : before);
                reads.increment();
            }
        }
    }
}
