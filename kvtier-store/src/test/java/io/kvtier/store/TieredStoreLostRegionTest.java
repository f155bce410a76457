package io.kvtier.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.store.disk.DiskTier;
import io.kvtier.store.disk.RecordFormat;
import io.kvtier.store.disk.RecoveredRecord;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 29: damage no checksum can see. 300 keys on disk, every third deleted after a restart (its tombstone in a
 * region of its own), a clean stop; then the tombstones' region is cut exactly at a record boundary, removed, or has
 * 4 KiB of its tombstones zeroed. No deleted key may come back, and the damage stays local: every key that was not
 * deleted reads back (before, a cut or a missing region brought every delete back, silently, and the zeroed block
 * dropped almost every key under the broad rule).
 */
class TieredStoreLostRegionTest {
    private static final long MiB = 1L << 20;
    private static final int KEYS = 300;

    @TempDir
    Path dir;
    private final Map<String, byte[]> kept = new LinkedHashMap<>();
    private final List<String> deleted = new ArrayList<>();

    private TestStore open() throws IOException {
        return TestStore.open(dir, 16 * MiB, 64 * MiB);
    }

    @BeforeEach
    void writeThenDeleteEveryThird() throws IOException {
        try (TestStore s = open()) {
            for (int i = 0; i < KEYS; i++) {
                String k = "key-" + i;
                byte[] v = Values.of(k, 1, 8 * 1024);
                s.put(k, v);
                kept.put(k, v);
            }
        } // the values reach the disk at close
        try (TestStore s = open()) {
            for (int i = 0; i < KEYS; i += 3) {
                String k = "key-" + i;
                assertThat(s.remove(k)).isTrue();
                kept.remove(k);
                deleted.add(k);
            }
        } // the tombstones reach the disk at close, then a seal summarizing their region
    }

    /** The tombstones on disk, in log order. */
    private List<RecoveredRecord> tombstones() throws IOException {
        List<RecoveredRecord> all = new ArrayList<>();
        try (DiskTier tier = DiskTier.open(dir, 64 * MiB, StoreOptions.regionBytes(64 * MiB), r -> { }, all::add,
                s -> { })) {
            return all.stream().filter(r -> r.type() == RecordFormat.TYPE_TOMBSTONE).toList();
        }
    }

    private Path fileOf(RecoveredRecord r) {
        return dir.resolve(String.format("region-%016x.kvr", r.location().region().id()));
    }

    private void assertNoDeleteCameBackAndEveryKeptKeyReads() throws IOException {
        try (TestStore s = open()) {
            for (String k : deleted) {
                assertThat(s.read(k)).as("deleted %s", k).isNull();
            }
            for (var e : kept.entrySet()) {
                assertThat(s.read(e.getKey())).as("kept %s", e.getKey()).isEqualTo(e.getValue());
            }
            System.out.printf("%d deleted keys stayed deleted, %d kept keys read back, %d dropped for damage%n",
                    deleted.size(), kept.size(), s.store.keysDroppedForDamage());
        }
    }

    @Test
    void aRegionCutAtTheRecordBoundaryBeforeATombstoneBringsNoDeleteBack() throws IOException {
        List<RecoveredRecord> t = tombstones();
        assertThat(t).hasSize(deleted.size());
        RecoveredRecord first = t.get(0);
        try (FileChannel ch = FileChannel.open(fileOf(first), StandardOpenOption.WRITE)) {
            ch.truncate(first.location().offset()); // a clean end: no checksum fails
        }
        assertNoDeleteCameBackAndEveryKeptKeyReads();
    }

    @Test
    void aMissingRegionBringsNoDeleteBack() throws IOException {
        RecoveredRecord first = tombstones().get(0);
        Files.delete(fileOf(first));
        assertNoDeleteCameBackAndEveryKeptKeyReads();
    }

    @Test
    void fourKiBOfZerosOverTombstonesDropOnlyWhatTheyHeld() throws IOException {
        RecoveredRecord tenth = tombstones().get(10);
        try (FileChannel ch = FileChannel.open(fileOf(tenth), StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.allocate(4096), tenth.location().offset());
        }
        assertNoDeleteCameBackAndEveryKeptKeyReads();
    }
}
