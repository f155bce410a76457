package io.kvtier.store;

import static io.kvtier.store.TestStore.MiB;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real store under a disk write limit (--disk-write-limit): chunks that leave memory unread are dropped once the
 * limit's bucket is empty, read ones and dropped-once ones are written, and the shutdown flush writes everything.
 */
class TieredStoreDiskAdmissionTest {
    private static final int CHUNK = (int) MiB;

    @TempDir
    Path dir;

    private TestStore open(long limit) throws IOException {
        return new TestStore(TieredStore.open(new StoreOptions(dir, 8 * MiB, 512 * MiB, 64 * MiB, 10_000, 0,
                IndexBudget.defaultBytes(8 * MiB, 512 * MiB), List.of(), limit)));
    }

    /** The demoter runs while free memory is under the watermark (1 MiB here); past it, states stay put. */
    private static void awaitDemoterDone(TestStore s) {
        TestStore.await("the demoter is done", () -> s.freeMemory() >= TieringRules.lowWatermark(8 * MiB, 0));
    }

    @Test
    void chunksLeavingMemoryUnreadAreDroppedOnceTheBucketIsEmptyAndTheReadOnesAreKept() throws IOException {
        try (TestStore s = open(1)) { // 1 byte/s: the bucket is its 64 MiB floor, and refills by nothing
            for (int i = 0; i < 100; i++) {
                s.put("c" + i, Values.of("c" + i, 1, CHUNK));
            }
            TestStore.await("the bucket ran dry", () -> s.stats().admissionDropped() > 0);
            s.put("hot", Values.of("hot", 1, CHUNK));
            assertThat(s.read("hot")).as("read while in memory").isEqualTo(Values.of("hot", 1, CHUNK));
            for (int i = 100; i < 130; i++) {
                s.put("c" + i, Values.of("c" + i, 1, CHUNK));
            }
            TestStore.await("hot left memory", () -> s.state("hot") != EntryState.MEMORY);
            awaitDemoterDone(s);

            assertThat(s.state("hot")).as("a read chunk is written whatever the bucket holds")
                    .isEqualTo(EntryState.DISK);
            assertThat(s.read("hot")).isEqualTo(Values.of("hot", 1, CHUNK));
            List<String> dropped = new ArrayList<>();
            int onDisk = 0;
            for (int i = 0; i < 130; i++) {
                EntryState state = s.state("c" + i);
                if (state == null) {
                    dropped.add("c" + i);
                    assertThat(s.read("c" + i)).isNull();
                } else if (state == EntryState.DISK) {
                    onDisk++;
                    assertThat(s.read("c" + i)).isEqualTo(Values.of("c" + i, 1, CHUNK));
                }
            }
            StoreStats st = s.stats();
            assertThat(onDisk).as("64 MiB of bucket: 64 chunks, the first ones").isEqualTo(64);
            assertThat(dropped).hasSize((int) st.admissionDropped()).contains("c64", "c99").doesNotContain("c0");
            assertThat(st.admissionDroppedBytes()).isEqualTo(st.admissionDropped() * CHUNK);
            assertThat(st.evictions()).as("a dropped value is a lost one").isEqualTo(st.admissionDropped());
            assertThat(st.evictedRegions()).isZero();
            assertThat(st.diskWriteLimit()).isEqualTo(1);

            // Stored again and pushed out again: its second chance.
            String again = dropped.get(0);
            s.put(again, Values.of(again, 2, CHUNK));
            for (int i = 130; i < 150; i++) {
                s.put("c" + i, Values.of("c" + i, 1, CHUNK));
            }
            TestStore.await(again + " left memory", () -> s.state(again) != EntryState.MEMORY);
            assertThat(s.state(again)).isEqualTo(EntryState.DISK);
            assertThat(s.read(again)).isEqualTo(Values.of(again, 2, CHUNK));
        }
    }

    @Test
    void theShutdownFlushWritesEveryValueWhateverTheLimit() throws IOException {
        List<String> inMemory = new ArrayList<>();
        try (TestStore s = open(1)) {
            for (int i = 0; i < 80; i++) {
                s.put("c" + i, Values.of("c" + i, 1, CHUNK));
            }
            TestStore.await("the bucket ran dry", () -> s.stats().admissionDropped() > 0);
            awaitDemoterDone(s);
            for (int i = 0; i < 80; i++) {
                if (s.state("c" + i) == EntryState.MEMORY) {
                    inMemory.add("c" + i);
                }
            }
        }
        assertThat(inMemory).isNotEmpty();
        try (TestStore s = open(0)) {
            for (String k : inMemory) {
                assertThat(s.read(k)).as(k).isEqualTo(Values.of(k, 1, CHUNK));
            }
        }
    }
}
