package io.kvtier.store;

import static io.kvtier.store.TestStore.KiB;
import static io.kvtier.store.TestStore.MiB;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The disk tier over several directories (DiskSet), through a real store: values spread over all of them and survive
 * a restart; a directory added to a store that holds data serves the old records where they are and never brings
 * back a version overwritten or deleted since; a directory lost while the node runs costs only its keys, and when it
 * comes back stale it is emptied before anything is read.
 */
class TieredStoreDiskDirsTest {
    private static final int VALUE = (int) (64 * KiB);
    private static final int KEYS = 200;

    @TempDir
    Path tmp;

    private static TestStore open(Path dir, List<Path> more, long diskBytes) throws IOException {
        return new TestStore(TieredStore.open(new StoreOptions(dir, 4 * MiB, diskBytes, 64 * MiB, 10_000, MiB,
                IndexBudget.defaultBytes(4 * MiB, diskBytes), more)));
    }

    private static byte[] value(String key, int version) {
        byte[] v = new byte[VALUE];
        byte[] tag = (key + "@" + version).getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < v.length; i++) {
            v[i] = tag[i % tag.length];
        }
        return v;
    }

    private static long regionFiles(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().startsWith("region-")).count();
        }
    }

    /** Which version of {@code key} the store serves: 0 if none; fails on bytes of no version at all. */
    private static int versionOf(TestStore s, String key, int... versions) {
        byte[] got = s.read(key);
        if (got == null) {
            return 0;
        }
        for (int v : versions) {
            if (Arrays.equals(got, value(key, v))) {
                return v;
            }
        }
        throw new AssertionError(key + " holds bytes of no version written");
    }

    @Test
    void valuesSpreadOverEveryDirectoryAndARestartServesThemAll() throws IOException {
        Path d0 = tmp.resolve("d0");
        List<Path> more = List.of(tmp.resolve("d1"), tmp.resolve("d2"));
        try (TestStore s = open(d0, more, 48 * MiB)) {
            for (int i = 0; i < KEYS; i++) {
                s.put("k" + i, value("k" + i, 1));
            }
            for (int i = 0; i < KEYS; i += 10) {
                assertThat(s.remove("k" + i)).isTrue();
            }
            assertThat(s.stats().diskDirectories()).isEqualTo(3);
        }
        for (Path d : List.of(d0, more.get(0), more.get(1))) {
            assertThat(regionFiles(d)).as("region files in %s", d).isPositive();
        }
        try (TestStore s = open(d0, more, 48 * MiB)) {
            for (int i = 0; i < KEYS; i++) {
                assertThat(versionOf(s, "k" + i, 1)).as("k%d", i).isEqualTo(i % 10 == 0 ? 0 : 1);
            }
        }
    }

    @Test
    void aDirectoryAddedLaterNeverBringsBackAnOverwrittenVersionWhateverItsLogLoses() throws IOException {
        Path d0 = tmp.resolve("d0");
        Path d1 = tmp.resolve("d1");
        try (TestStore s = open(d0, List.of(), 32 * MiB)) { // the layout of before: one directory, no disk-set file
            for (int i = 0; i < KEYS; i++) {
                s.put("k" + i, value("k" + i, 1));
            }
        }
        try (TestStore s = open(d0, List.of(d1), 64 * MiB)) {
            for (int i = 0; i < KEYS; i++) {
                assertThat(versionOf(s, "k" + i, 1)).as("k%d, read where it was written", i).isEqualTo(1);
                s.put("k" + i, value("k" + i, 2)); // about half of the keys are homed in d1 now
            }
        }
        assertThat(regionFiles(d1)).isPositive();
        // d1's whole log goes (as if eviction had removed every region of it) while d0 keeps the first versions:
        // the overwrite's tombstone went where the version it ended was, so none of them comes back.
        try (Stream<Path> s = Files.list(d1)) {
            for (Path p : s.filter(p -> p.getFileName().toString().startsWith("region-")).toList()) {
                Files.delete(p);
            }
        }
        int second = 0;
        int gone = 0;
        try (TestStore s = open(d0, List.of(d1), 64 * MiB)) {
            for (int i = 0; i < KEYS; i++) {
                int v = versionOf(s, "k" + i, 1, 2);
                assertThat(v).as("k%d: the first version must not come back", i).isNotEqualTo(1);
                if (v == 2) {
                    second++;
                } else {
                    gone++;
                }
            }
        }
        assertThat(second).as("keys homed in d0").isPositive();
        assertThat(gone).as("keys homed in d1, whose log was lost").isPositive();
    }

    @Test
    void aDirectoryLostWhileRunningCostsOnlyItsKeysAndComesBackEmpty() throws Exception {
        Path d0 = tmp.resolve("d0");
        Path d1 = tmp.resolve("d1");
        Path copy = tmp.resolve("d1-copy");
        try (TestStore s = open(d0, List.of(d1), 64 * MiB)) {
            for (int i = 0; i < KEYS; i++) {
                s.put("k" + i, value("k" + i, 1));
            }
            TestStore.await("most values demoted", () -> s.stats().diskEntries() > KEYS / 2);
            copyTree(d1, copy); // what an operator might bring back later: a stale copy
            deleteTree(d1);
            TestStore.await("d1 found lost", () -> s.stats().diskDirectoriesLive() == 1);
            int served = 0;
            List<String> lost = new ArrayList<>();
            for (int i = 0; i < KEYS; i++) {
                int v = versionOf(s, "k" + i, 1);
                if (v == 1) {
                    served++;
                } else {
                    lost.add("k" + i);
                }
            }
            assertThat(served).as("keys of d0 (and those still in memory) are served").isPositive();
            assertThat(lost).as("keys only d1 held are misses").isNotEmpty();
            for (int i = 0; i < KEYS; i++) { // writes go on, into d0
                s.put("n" + i, value("n" + i, 1));
            }
            for (int i = 0; i < KEYS; i++) {
                assertThat(versionOf(s, "n" + i, 1)).isEqualTo(1);
            }
            s.close();
            // The stale copy comes back under d1's path: it left the set at the loss, so it is emptied at start-up.
            copyTree(copy, d1);
            try (TestStore again = open(d0, List.of(d1), 64 * MiB)) {
                for (String k : lost) {
                    assertThat(again.read(k)).as("%s, lost with d1, must not come back from its stale copy", k)
                            .isNull();
                }
                for (int i = 0; i < KEYS; i++) {
                    assertThat(versionOf(again, "n" + i, 1)).isEqualTo(1);
                }
                assertThat(again.stats().diskDirectoriesLive()).isEqualTo(2);
            }
        }
    }

    @Test
    void aDirectoryWithRegionsButNoDiskSetFileIsRefused() throws IOException {
        Path d0 = tmp.resolve("d0");
        Path foreign = tmp.resolve("foreign");
        try (TestStore s = open(foreign, List.of(), 16 * MiB)) { // another store's single directory
            for (int i = 0; i < 100; i++) {
                s.put("k" + i, value("k" + i, 1));
            }
        }
        assertThatThrownBy(() -> open(d0, List.of(foreign), 32 * MiB).close())
                .hasMessageContaining("not part of this store's disk tier");
        assertThatThrownBy(() -> open(d0, List.of(d0), 32 * MiB))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("given twice");
    }

    @Test
    void anEmptyDirectoryWhereAMemberIsMissingIsRefusedUnlessMarkedAsAReplacement() throws Exception {
        Path d0 = tmp.resolve("d0");
        Path d1 = tmp.resolve("d1");
        try (TestStore s = open(d0, List.of(d1), 64 * MiB)) {
            for (int i = 0; i < KEYS; i++) {
                s.put("k" + i, value("k" + i, 1));
            }
        }
        // d1's drive not mounted: its path is an empty directory of the filesystem below.
        Path mounted = tmp.resolve("d1-drive");
        Files.move(d1, mounted);
        Files.createDirectories(d1);
        assertThatThrownBy(() -> open(d0, List.of(d1), 64 * MiB).close())
                .hasMessageContaining("if this is that drive, mount it");
        // Mounted again: everything is there.
        deleteTree(d1);
        Files.move(mounted, d1);
        try (TestStore s = open(d0, List.of(d1), 64 * MiB)) {
            for (int i = 0; i < KEYS; i++) {
                assertThat(versionOf(s, "k" + i, 1)).as("k%d", i).isEqualTo(1);
            }
        }
        // The drive replaced, as the operator says with the mark: d1's keys are gone, d0's served.
        deleteTree(d1);
        Files.createDirectories(d1);
        Files.createFile(d1.resolve("disk-set.replace"));
        int served = 0;
        try (TestStore s = open(d0, List.of(d1), 64 * MiB)) {
            for (int i = 0; i < KEYS; i++) {
                served += versionOf(s, "k" + i, 1);
            }
        }
        assertThat(served).isBetween(1, KEYS - 1);
        assertThat(d1.resolve("disk-set.replace")).doesNotExist();
    }

    @Test
    void aDirectoryOfAnotherStoresSetIsRefused() throws IOException {
        Path a0 = tmp.resolve("a0");
        Path a1 = tmp.resolve("a1");
        Path b0 = tmp.resolve("b0");
        Path b1 = tmp.resolve("b1");
        open(a0, List.of(a1), 32 * MiB).close();
        open(b0, List.of(b1), 32 * MiB).close();
        assertThatThrownBy(() -> open(a0, List.of(b1), 32 * MiB).close())
                .hasMessageContaining("belongs to another store's disk tier");
    }

    @Test
    void aGracefulStopWritesToTheOtherDirectoriesWhenOneShareIsFull() throws IOException {
        Path d0 = tmp.resolve("d0");
        Path d1 = tmp.resolve("d1");
        // 24 MiB of memory over two directories of 16 MiB: the stop's flush fills one share before the other.
        try (TestStore s = new TestStore(TieredStore.open(new StoreOptions(d0, 24 * MiB, 32 * MiB, 64 * MiB, 10_000,
                MiB, IndexBudget.defaultBytes(24 * MiB, 32 * MiB), List.of(d1))))) {
            for (int i = 0; i < 280; i++) { // 17.5 MiB, nearly all of it still in memory at the stop
                s.put("k" + i, value("k" + i, 1));
            }
        }
        try (TestStore s = open(d0, List.of(d1), 32 * MiB)) {
            for (int i = 0; i < 280; i++) {
                assertThat(versionOf(s, "k" + i, 1)).as("k%d after a graceful stop", i).isEqualTo(1);
            }
        }
    }

    private static void copyTree(Path from, Path to) throws IOException {
        Files.createDirectories(to);
        try (Stream<Path> s = Files.list(from)) {
            for (Path p : s.toList()) {
                if (Files.isRegularFile(p) && !p.getFileName().toString().equals("LOCK")) {
                    Files.copy(p, to.resolve(p.getFileName()), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }

    /** rm -rf, again while the running store's writer still adds a file now and then (until it sees the loss). */
    private static void deleteTree(Path dir) throws Exception {
        for (int attempt = 0; Files.exists(dir); attempt++) {
            try (Stream<Path> s = Files.walk(dir)) {
                for (Path p : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            } catch (java.nio.file.DirectoryNotEmptyException | java.nio.file.NoSuchFileException e) {
                assertThat(attempt).as("deleting %s", dir).isLessThan(100);
                Thread.sleep(10);
            }
        }
    }
}
