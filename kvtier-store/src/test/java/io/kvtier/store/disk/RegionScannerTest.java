package io.kvtier.store.disk;

import static io.kvtier.store.disk.Records.bytes;
import static io.kvtier.store.disk.Records.read;
import static io.kvtier.store.disk.Records.value;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Recovery of region files damaged by a crash (torn tail of the newest region: truncated) or by the medium (flipped
 * bits, a region cut short: reported as damage of a named key or a bounded stretch, nothing truncated).
 */
class RegionScannerTest {
    private static final long MiB = 1L << 20;
    private static final int VALUE = 50_000;
    private static final int RECORDS = 5;

    @TempDir
    Path dir;
    private final List<RecoveredRecord> recovered = new ArrayList<>();
    private RecoveryStats stats;

    private DiskTier open() throws IOException {
        recovered.clear();
        return DiskTier.open(dir, 16 * MiB, 4 * MiB, r -> { }, recovered::add, s -> stats = s);
    }

    /**
     * Writes RECORDS records into one region and returns their locations; then the process dies (written to the
     * files, nothing more): the region is the newest, as a crash leaves it, with no seal after it.
     */
    private List<DiskLocation> writeRecords() throws IOException {
        List<DiskLocation> locations = new ArrayList<>();
        DiskTier tier = open();
        for (int i = 0; i < RECORDS; i++) {
            locations.add(tier.append(value("key-" + i, i + 1, 0, bytes(i, VALUE))));
        }
        tier.flush();
        tier.abandon();
        return locations;
    }

    @ParameterizedTest(name = "cut {0} bytes into the last record")
    @ValueSource(ints = {1, 20, RecordFormat.HEADER_SIZE + 2, RecordFormat.HEADER_SIZE + 5 + VALUE / 2,
            RecordFormat.HEADER_SIZE + 5 + VALUE - 1})
    void truncatedLastRecordIsDroppedAndCountedAndTheRestSurvive(int cut) throws IOException {
        List<DiskLocation> locations = writeRecords();
        DiskLocation last = locations.getLast();
        Path file = Region.pathFor(dir, last.region().id());
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.truncate(last.offset() + cut);
        }

        try (DiskTier tier = open()) {
            assertThat(stats.droppedRecords()).isEqualTo(1);
            assertThat(stats.droppedBytes()).isEqualTo(cut);
            assertThat(stats.records()).isEqualTo(RECORDS - 1);
            assertThat(Files.size(file)).as("torn tail truncated away").isEqualTo(last.offset());
            assertSurvivors(tier, RECORDS - 1);
            tier.append(value("after", 99, 0, bytes(99, 10)));
        }
        try (DiskTier tier = open()) {
            assertThat(stats.droppedRecords()).isZero();
            assertThat(recovered).hasSize(RECORDS);
            assertThat(read(tier, recovered.getLast().location(), "after")).isEqualTo(bytes(99, 10));
        }
    }

    @Test
    void bitFlipInTheLastRecordFailsItsReadAndIsDroppedAtRecovery() throws IOException {
        List<DiskLocation> locations = new ArrayList<>();
        try (DiskTier tier = open()) {
            for (int i = 0; i < RECORDS; i++) {
                locations.add(tier.append(value("key-" + i, i + 1, 0, bytes(i, VALUE))));
            }
            tier.flush();
            DiskLocation last = locations.getLast();
            flipBit(Region.pathFor(dir, last.region().id()),
                    last.offset() + RecordFormat.HEADER_SIZE + last.keyLength() + VALUE / 2);

            assertThatThrownBy(() -> read(tier, last, "key-" + (RECORDS - 1)))
                    .isInstanceOf(CorruptRecordException.class);
            assertThat(read(tier, locations.getFirst(), "key-0")).isEqualTo(bytes(0, VALUE));
        }
        try (DiskTier tier = open()) {
            assertThat(stats.droppedRecords()).isEqualTo(1);
            assertThat(stats.droppedBytes()).isEqualTo(locations.getLast().recordLength() + RecordFormat.TRAILER_SIZE);
            assertSurvivors(tier, RECORDS - 1);
            assertThat(damage()).containsExactly(RecordFormat.fingerprint(Records.key("key-" + (RECORDS - 1))));
        }
    }

    @Test
    void bitFlipInAHeaderIsCaughtByTheChecksum() throws IOException {
        List<DiskLocation> locations = writeRecords();
        DiskLocation last = locations.getLast();
        flipBit(Region.pathFor(dir, last.region().id()), last.offset() + 25); // inside the expiry field

        try (DiskTier tier = open()) {
            assertThat(stats.droppedRecords()).isEqualTo(1);
            assertSurvivors(tier, RECORDS - 1);
            assertThat(damage()).containsExactly(RecordFormat.fingerprint(Records.key("key-" + (RECORDS - 1))));
        }
    }

    @Test
    void flippedBitInALengthFieldDropsOnlyThatRecordAndTruncatesNothing() throws IOException {
        List<DiskLocation> locations = new ArrayList<>();
        try (DiskTier tier = open()) {
            for (int i = 0; i < 300; i++) {
                locations.add(tier.append(value("key-" + i, i + 1, 0, bytes(i, 200))));
            }
        }
        DiskLocation hit = locations.get(100);
        Path file = Region.pathFor(dir, hit.region().id());
        long size = Files.size(file);
        flipBit(file, hit.offset() + 39); // the high byte of the value length

        try (DiskTier tier = open()) {
            List<RecoveredRecord> intact = intact();
            assertThat(intact).hasSize(299);
            assertThat(intact).noneMatch(r -> new String(r.key()).equals("key-100"));
            for (RecoveredRecord r : intact) {
                int i = Integer.parseInt(new String(r.key()).substring(4));
                assertThat(read(tier, r.location(), "key-" + i)).isEqualTo(bytes(i, 200));
            }
            assertThat(damage()).containsExactly(RecordFormat.fingerprint(Records.key("key-100")));
            assertThat(stats.damagedRegions()).isEqualTo(1);
        }
        Path quarantined = dir.resolve(file.getFileName().toString().replace(".kvr", ".damaged.kvr"));
        assertThat(quarantined).exists();
        assertThat(Files.size(quarantined)).as("not truncated").isEqualTo(size);
    }

    @Test
    void regionCutShortInAHeaderWithNewerRegionsAfterItIsNamedByTheirSummary() throws IOException {
        List<DiskLocation> locations = new ArrayList<>();
        try (DiskTier tier = DiskTier.open(dir, 16 * MiB, MiB, r -> { }, recovered::add, s -> stats = s)) {
            for (int i = 0; i < 40; i++) {
                locations.add(tier.append(value("key-" + i, i + 1, 0, bytes(i, VALUE))));
            }
        }
        DiskLocation firstOfSecond = locations.stream().filter(l -> l.region().id() == 1).findFirst().orElseThrow();
        DiskLocation lastOfFirst = locations.get(locations.indexOf(firstOfSecond) - 1);
        Path first = Region.pathFor(dir, 0);
        try (FileChannel ch = FileChannel.open(first, StandardOpenOption.WRITE)) {
            ch.truncate(lastOfFirst.offset() + 20);
        }
        recovered.clear();
        try (DiskTier tier = DiskTier.open(dir, 16 * MiB, MiB, r -> { }, recovered::add, s -> stats = s)) {
            // The next region's seal summarizes this one: the records cut off are named, so the damage is not
            // bounded by a sequence number (which drops every older key) but by key.
            assertThat(recovered).noneMatch(r -> r.type() == RecoveredRecord.DAMAGED_UNKNOWN);
            assertThat(damage()).contains(RecordFormat.fingerprint(Records.key(
                    "key-" + (locations.indexOf(firstOfSecond) - 1))));
            assertThat(Files.size(dir.resolve(first.getFileName().toString().replace(".kvr", ".damaged.kvr"))))
                    .as("an older region is never truncated").isEqualTo(lastOfFirst.offset() + 20);
            assertThat(intact()).hasSize(39);
        }
    }

    @Test
    void regionsOfFormatVersionOneAreRefusedNotMisread() throws IOException {
        ByteBuffer v1 = ByteBuffer.allocate(64).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(0, RecordFormat.MAGIC_V1);
        Files.write(Region.pathFor(dir, 0), v1.array());
        assertThatThrownBy(this::open).isInstanceOf(IOException.class).hasMessageContaining("format version 1");
    }

    private List<RecoveredRecord> intact() {
        return recovered.stream().filter(r -> r.type() > 0).toList();
    }

    private List<Long> damage() {
        return recovered.stream().filter(r -> r.type() == RecoveredRecord.DAMAGED).map(RecoveredRecord::target)
                .toList();
    }

    @Test
    void zeroFilledTailIsDroppedAsGarbage() throws IOException {
        List<DiskLocation> locations = writeRecords();
        Path file = Region.pathFor(dir, locations.getLast().region().id());
        long size = Files.size(file);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.allocate(4096), size);
        }

        try (DiskTier tier = open()) {
            assertThat(stats.droppedRecords()).isEqualTo(1);
            assertThat(stats.droppedBytes()).isEqualTo(4096);
            assertThat(Files.size(file)).isEqualTo(size);
            assertSurvivors(tier, RECORDS);
        }
    }

    private void assertSurvivors(DiskTier tier, int n) throws IOException {
        List<RecoveredRecord> intact = intact();
        assertThat(intact).hasSize(n);
        for (int i = 0; i < n; i++) {
            assertThat(new String(intact.get(i).key())).isEqualTo("key-" + i);
            assertThat(read(tier, intact.get(i).location(), "key-" + i)).isEqualTo(bytes(i, VALUE));
        }
    }

    private static void flipBit(Path file, long offset) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.read(b, offset);
            b.put(0, (byte) (b.get(0) ^ 0x10)).rewind();
            ch.write(b, offset);
        }
    }
}
