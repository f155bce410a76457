package io.kvtier.store;

import static io.kvtier.store.TestStore.MiB;
import static io.kvtier.store.TestStore.key;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The disk tier under a budget so small that one demotion batch cycles through all of its regions. */
class TieredStoreDiskPressureTest {
    @TempDir
    Path dir;

    @Test
    void valueWhoseRegionIsEvictedWithinItsOwnDemotionBatchStaysInMemory() throws IOException {
        // 16 MiB of disk in 1 MiB regions; 32 MiB of memory, of which the demoter keeps 4 MiB free.
        byte[] a = Values.of("a", 1, (int) (2 * MiB));
        byte[] b = Values.of("b", 1, (int) (15 * MiB) - 70_000);
        byte[] c = Values.of("c", 1, (int) (15 * MiB) - 70_000);
        try (TestStore s = TestStore.open(dir, 32 * MiB, 16 * MiB)) {
            s.put("a", a);
            s.put("b", b);
            // Now memory is full: one batch demotes a, then b, whose append evicts the region a was just written to.
            s.put("c", c);
            TestStore.await("b was demoted", () -> s.state("b") == EntryState.DISK);

            assertThat(s.stats().evictedRegions()).isEqualTo(1);
            assertThat(s.state("a")).as("a's record went with its region").isEqualTo(EntryState.MEMORY);
            assertThat(s.store.exists(key("a"))).isTrue();
            assertThat(s.read("a")).isEqualTo(a);
            assertThat(s.read("b")).isEqualTo(b);
            assertThat(s.read("c")).isEqualTo(c);
            StoreStats stats = s.stats();
            assertThat(stats.evictions()).as("nothing was lost").isZero();
            assertThat(stats.diskEntries()).isEqualTo(1);
            assertThat(stats.diskValueBytes()).isLessThanOrEqualTo(stats.diskUsedBytes());
            s.remove("a"); // 32 MiB of values do not fit on 16 MiB of disk: close would (rightly) report a loss
            s.remove("c");
        }
    }
}
