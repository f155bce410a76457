package io.kvtier.store.disk;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** DiskSet's placement on crafted keys: homes, and where a record goes when its home's share is full. */
class DiskSetTest {
    private static final long MiB = 1 << 20;

    @TempDir
    Path tmp;

    private DiskSet open(int dirs, long each) throws IOException {
        List<Path> paths = new ArrayList<>();
        long[] budgets = new long[dirs];
        for (int i = 0; i < dirs; i++) {
            paths.add(tmp.resolve("d" + i));
            budgets[i] = each;
        }
        return DiskSet.open(paths, budgets, r -> { }, r -> { }, s -> { });
    }

    @Test
    void keysSpreadOverTheDirectoriesAndEachKeepsItsHome() throws IOException {
        try (DiskSet set = open(3, 16 * MiB)) {
            int[] count = new int[3];
            for (int i = 0; i < 3_000; i++) {
                byte[] key = Records.key("k" + i);
                int home = set.home(key);
                assertThat(set.home(key)).isEqualTo(home);
                count[home]++;
            }
            for (int c : count) {
                assertThat(c).as("keys homed in each of 3 directories").isBetween(850, 1_150);
            }
        }
    }

    @Test
    void aRecordWhoseHomeIsFullWhileItsNewestRegionsAreKeptGoesToAnotherDirectory() throws IOException {
        try (DiskSet set = open(2, 8 * MiB)) {
            set.keepNewRegions(); // as the shutdown flush does: nothing written from now on is evicted for room
            byte[] value = Records.bytes(1, (int) (512 << 10));
            int elsewhere = 0;
            for (int i = 0, n = 0; n < 20; i++) { // 20 x 512 KiB = 10 MiB of keys homed in d0, which takes 7
                String k = "k" + i;
                if (set.home(Records.key(k)) != 0) {
                    continue;
                }
                DiskLocation loc = set.append(Records.value(k, i + 1, 0, value));
                set.flush();
                elsewhere += loc.region().directory() == 1 ? 1 : 0;
                n++;
            }
            assertThat(elsewhere).as("records that went to d1 once d0's share was full").isPositive();
        }
    }
}
