package io.kvtier.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.store.memory.MemoryValue;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Races between writers of the same keys must not change what a restart finds: the state a clean close leaves is
 * exactly the state the store served before it. Each test races two threads over many keys whose old versions are on
 * disk (the case where tombstones matter), then compares the live state with the reopened one.
 */
class TieredStoreRaceTest {
    private static final int HOT_KEYS = 40;
    private static final int OPS = 20_000;
    private static final int VALUE = 1024;

    @TempDir
    Path dir;

    @Test
    void aDeleteRacingAPutNeverLosesTheAcknowledgedPutAcrossARestart() throws Exception {
        int keys = 20_000;
        try (TestStore s = TestStore.open(dir, 64 * TestStore.MiB, 256 * TestStore.MiB)) {
            for (int i = 0; i < keys; i++) {
                s.put("k" + i, value(i, 0, 16));
            }
        } // closing writes every value to disk: each delete below must write a tombstone
        Map<String, String> before;
        try (TestStore s = TestStore.open(dir, 64 * TestStore.MiB, 256 * TestStore.MiB)) {
            // Lockstep: both threads work on key i at the same moment, which is where the tombstone's number and
            // the new version's number can come out in the wrong order.
            java.util.concurrent.atomic.AtomicInteger turnA = new java.util.concurrent.atomic.AtomicInteger(-1);
            java.util.concurrent.atomic.AtomicInteger turnB = new java.util.concurrent.atomic.AtomicInteger(-1);
            java.util.Queue<CompletableFuture<?>> pending = new java.util.concurrent.ConcurrentLinkedQueue<>();
            race(() -> {
                for (int i = 0; i < keys; i++) {
                    turnA.set(i);
                    while (turnB.get() < i) {
                        Thread.onSpinWait();
                    }
                    pending.add(s.store.remove(TestStore.key("k" + i), false));
                }
            }, () -> {
                for (int i = 0; i < keys; i++) {
                    turnB.set(i);
                    while (turnA.get() < i) {
                        Thread.onSpinWait();
                    }
                    pending.add(s.putAsync("k" + i, value(i, 1, 16), PutOptions.PLAIN));
                }
            });
            pending.forEach(CompletableFuture::join);
            before = snapshot(s);
        }
        try (TestStore s = TestStore.open(dir, 64 * TestStore.MiB, 256 * TestStore.MiB)) {
            assertThat(snapshot(s)).isEqualTo(before);
        }
    }

    @Test
    void flushallRacingPutsLeavesNoHiddenEntriesAndNothingComesBack() throws Exception {
        Map<String, String> before;
        try (TestStore s = TestStore.open(dir, 4 * TestStore.MiB, 256 * TestStore.MiB)) {
            race(() -> {
                for (int i = 0; i < 300; i++) {
                    s.store.clear().join();
                }
            }, () -> {
                SplittableRandom rnd = new SplittableRandom(3);
                for (int i = 0; i < OPS; i++) {
                    int k = rnd.nextInt(HOT_KEYS);
                    s.put("k" + k, value(k, i));
                }
            });
            before = snapshot(s);
            StoreStats st = s.store.stats();
            assertThat(st.memoryEntries() + st.diskEntries()).as("every entry the counters see is in the index")
                    .isEqualTo(st.keys());
        }
        try (TestStore s = TestStore.open(dir, 4 * TestStore.MiB, 256 * TestStore.MiB)) {
            assertThat(snapshot(s)).isEqualTo(before);
        }
    }

    @Test
    void aLargeValueRacingSmallWritesOfTheSameKeyKeepsTheWinnerAcrossARestart() throws Exception {
        Map<String, String> before;
        int keys = 40;
        try (TestStore s = TestStore.open(dir, 2 * TestStore.MiB, 512 * TestStore.MiB)) {
            for (int i = 0; i < keys; i++) {
                s.put("k" + i, value(i, 0));
            }
            race(() -> {
                for (int i = 0; i < keys; i++) {
                    byte[] big = value(i, 9, 2 * (int) TestStore.MiB); // over half of memory: goes straight to disk
                    var write = s.store.openDirectWrite(big.length);
                    write.append(java.nio.ByteBuffer.wrap(big), () -> { });
                    s.store.putDirect(TestStore.key("k" + i), write, PutOptions.PLAIN).join();
                }
            }, () -> {
                for (int i = 0; i < keys; i++) {
                    s.put("k" + i, value(i, 1));
                    s.remove("k" + i);
                    s.put("k" + i, value(i, 2));
                }
            });
            before = snapshot(s);
        }
        try (TestStore s = TestStore.open(dir, 2 * TestStore.MiB, 512 * TestStore.MiB)) {
            assertThat(snapshot(s)).isEqualTo(before);
        }
    }

    @Test
    void refusesKeysLongerThanTheDiskFormatHolds() throws Exception {
        try (TestStore s = TestStore.open(dir, 2 * TestStore.MiB, 64 * TestStore.MiB)) {
            MemoryValue v = s.store.tryAllocate(3);
            v.write(new byte[] {1, 2, 3});
            assertThatThrownBy(() -> s.store.put(new byte[70_000], v, PutOptions.PLAIN))
                    .isInstanceOf(KeyTooLongException.class).hasMessageContaining("70000");
            assertThat(s.store.stats().memoryUsedBytes()).as("the refused value was released").isZero();
        }
    }

    /** Key -> a short digest of its value, for every live key. */
    private static Map<String, String> snapshot(TestStore s) {
        Map<String, String> out = new HashMap<>();
        s.store.forEachKey(k -> {
            String key = new String(k);
            byte[] v = s.read(key);
            if (v != null) {
                out.put(key, v.length + ":" + java.util.Arrays.hashCode(v));
            }
        });
        return out;
    }

    private static byte[] value(int key, int version) {
        return value(key, version, VALUE);
    }

    private static byte[] value(int key, int version, int size) {
        byte[] v = new byte[size];
        new SplittableRandom(key * 31L + version).nextBytes(v);
        return v;
    }

    /** Runs both on threads of their own (the common pool may have a single worker on a 2-core machine). */
    private static void race(Runnable a, Runnable b) throws Exception {
        CountDownLatch start = new CountDownLatch(1);
        CompletableFuture<Void> fa = new CompletableFuture<>();
        CompletableFuture<Void> fb = new CompletableFuture<>();
        Thread.ofPlatform().start(() -> run(start, a, fa));
        Thread.ofPlatform().start(() -> run(start, b, fb));
        start.countDown();
        fa.get(60, TimeUnit.SECONDS);
        fb.get(60, TimeUnit.SECONDS);
    }

    private static void run(CountDownLatch start, Runnable r, CompletableFuture<Void> done) {
        try {
            await(start, r);
            done.complete(null);
        } catch (Throwable t) {
            done.completeExceptionally(t);
        }
    }

    private static void await(CountDownLatch start, Runnable r) {
        try {
            start.await();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
        r.run();
    }
}
