package io.kvtier.store;

import static io.kvtier.store.TestStore.KiB;
import static io.kvtier.store.TestStore.MiB;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Issue 10, repros 6 and 7 in one process: a data directory deleted (and reused) under a running store. */
class TieredStoreDiskFaultTest {
    private static final int VALUE = (int) (64 * KiB);

    @TempDir
    Path root;

    @Test
    void storeWhoseDirectoryWasDeletedWritesNothingIntoItsSuccessorFailsWritesAtOnceAndReportsTheLoss()
            throws IOException {
        Path data = root.resolve("data");
        TestStore first = TestStore.open(data, 4 * MiB, 64 * MiB);
        first.put("first-0", Values.of("first-0", 0, VALUE));
        deleteRecursively(data);
        try (TestStore second = TestStore.open(data, 4 * MiB, 64 * MiB)) {
            second.put("second", Values.of("second", 1, 100));
        }

        long start = System.nanoTime();
        int acked = 1;
        Throwable failure = null;
        for (int i = 1; i < 1000 && failure == null; i++) {
            try {
                first.put("first-" + i, Values.of("first-" + i, i, VALUE));
            } catch (StoreFullException | AssertionError e) { // AssertionError: TestStore.join's wrapping
                failure = e instanceof StoreFullException ? e : e.getCause().getCause();
            }
        }
        assertThat(failure).isInstanceOf(StoreFullException.class).hasMessageContaining("disk tier cannot take writes");
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertThat(millis).as("memory filled and the write failed, without a 10 s wait").isLessThan(5_000);
        for (int i = 1; first.read("first-" + i) != null; i++) {
            acked++;
        }
        assertThat(acked).isGreaterThan(10);

        int lost = acked;
        assertThatThrownBy(first::close).isInstanceOfSatisfying(ShutdownLossException.class, e -> {
            assertThat(e.keys()).isEqualTo(lost);
            assertThat(e.bytes()).isEqualTo((long) lost * VALUE);
        });
        try (TestStore again = TestStore.open(data, 4 * MiB, 64 * MiB)) {
            assertThat(again.read("second")).isEqualTo(Values.of("second", 1, 100));
            assertThat(again.store.size()).as("nothing of the first store landed in the second's directory")
                    .isEqualTo(1);
        }
    }

    private static void deleteRecursively(Path dir) throws IOException {
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
