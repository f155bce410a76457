package io.kvtier.store.disk;

import static io.kvtier.store.disk.Records.bytes;
import static io.kvtier.store.disk.Records.key;
import static io.kvtier.store.disk.Records.read;
import static io.kvtier.store.disk.Records.value;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DiskTierTest {
    private static final long MiB = 1L << 20;

    @TempDir
    Path dir;
    private final List<RecoveredRecord> recovered = new ArrayList<>();
    private final List<Region> evicted = new ArrayList<>();
    private RecoveryStats stats;

    private DiskTier open(long budget, long regionSize) throws IOException {
        recovered.clear();
        return DiskTier.open(dir, budget, regionSize, evicted::add, recovered::add, s -> stats = s);
    }

    @Test
    void appendedRecordsReadBackVerified() throws IOException {
        try (DiskTier tier = open(64 * MiB, 8 * MiB)) {
            Map<String, byte[]> values = new LinkedHashMap<>();
            Map<String, DiskLocation> locations = new LinkedHashMap<>();
            Random random = new Random(1);
            for (int i = 0; i < 30; i++) {
                String k = "key-" + i;
                // One value larger than the 4 MiB write buffer takes the direct path.
                byte[] v = bytes(i, i == 17 ? 5 * (int) MiB + 3 : random.nextInt(300_000));
                values.put(k, v);
                locations.put(k, tier.append(value(k, i + 1, 0, v)));
            }
            DiskLocation tombstone = tier.append(PendingRecord.tombstone(key("gone"), 31));
            DiskLocation expiry = tier.append(PendingRecord.expiry(key("key-3"), 32, 123456789L, 3));
            tier.flush();

            for (var e : values.entrySet()) {
                DiskLocation loc = locations.get(e.getKey());
                assertThat(loc.valueLength()).isEqualTo(e.getValue().length);
                assertThat(read(tier, loc, e.getKey())).as(e.getKey()).isEqualTo(e.getValue());
            }
            assertThat(read(tier, tombstone, "gone")).isEmpty();
            assertThat(read(tier, expiry, "key-3")).isEqualTo(targetOf(3));
            long total = values.entrySet().stream()
                    .mapToLong(e -> RecordFormat.footprint(key(e.getKey()).length, e.getValue().length)).sum()
                    + tombstone.recordLength() + expiry.recordLength() + 2 * RecordFormat.TRAILER_SIZE;
            assertThat(tier.usedBytes()).isEqualTo(total + tier.sealBytesWritten());
        }
    }

    @Test
    void readOfARecordUnderAnotherKeyIsCorrupt() throws IOException {
        try (DiskTier tier = open(16 * MiB, 4 * MiB)) {
            DiskLocation loc = tier.append(value("mine", 1, 0, bytes(1, 100)));
            tier.flush();
            assertThatThrownBy(() -> read(tier, loc, "yours")).isInstanceOf(CorruptRecordException.class);
        }
    }

    @Test
    void reopenRecoversTheSameRecordsInLogOrder() throws IOException {
        record Appended(String key, long seq, long expireAt, byte type, byte[] value, DiskLocation location) {
        }
        List<Appended> appended = new ArrayList<>();
        long used;
        try (DiskTier tier = open(64 * MiB, 4 * MiB)) {
            Random random = new Random(2);
            for (int i = 0; i < 40; i++) {
                String k = "k" + random.nextInt(10);
                long seq = i + 1;
                Appended a = switch (i % 5) {
                    case 3 -> new Appended(k, seq, 0, RecordFormat.TYPE_TOMBSTONE, new byte[0],
                            tier.append(PendingRecord.tombstone(key(k), seq)));
                    case 4 -> new Appended(k, seq, 1000 + i, RecordFormat.TYPE_EXPIRY, targetOf(1),
                            tier.append(PendingRecord.expiry(key(k), seq, 1000 + i, 1)));
                    default -> {
                        byte[] v = bytes(seq, random.nextInt(600_000));
                        yield new Appended(k, seq, i * 7L, RecordFormat.TYPE_VALUE, v,
                                tier.append(value(k, seq, i * 7L, v)));
                    }
                };
                appended.add(a);
            }
            used = tier.usedBytes();
        }

        try (DiskTier tier = open(64 * MiB, 4 * MiB)) {
            assertThat(recovered).hasSameSizeAs(appended);
            for (int i = 0; i < appended.size(); i++) {
                Appended a = appended.get(i);
                RecoveredRecord r = recovered.get(i);
                assertThat(new String(r.key())).isEqualTo(a.key());
                assertThat(r.seq()).isEqualTo(a.seq());
                assertThat(r.expireAt()).isEqualTo(a.expireAt());
                assertThat(r.type()).isEqualTo(a.type());
                assertThat(r.location().region().id()).isEqualTo(a.location().region().id());
                assertThat(r.location().offset()).isEqualTo(a.location().offset());
                assertThat(r.location().valueLength()).isEqualTo(a.value().length);
                assertThat(read(tier, r.location(), a.key())).isEqualTo(a.value());
            }
            assertThat(stats.records()).isEqualTo(appended.size());
            assertThat(stats.bytes()).isEqualTo(tier.usedBytes()).as("the seal written at close").isGreaterThan(used);
            assertThat(stats.droppedRecords()).isZero();
            assertThat(stats.regions()).isGreaterThan(1);

            DiskLocation later = tier.append(value("after", 100, 0, bytes(100, 1000)));
            assertThat(later.region().id()).as("appends go to a fresh region")
                    .isGreaterThan(appended.getLast().location().region().id());
        }
        try (DiskTier tier = open(64 * MiB, 4 * MiB)) {
            assertThat(recovered).hasSize(appended.size() + 1);
            assertThat(read(tier, recovered.getLast().location(), "after")).isEqualTo(bytes(100, 1000));
        }
    }

    @Test
    void rollsOverRegionsAndEvictsTheOldestFirstWhenTheBudgetIsFull() throws IOException {
        Map<String, DiskLocation> locations = new LinkedHashMap<>();
        try (DiskTier tier = open(4 * MiB, MiB)) {
            for (int i = 0; i < 40; i++) {
                String k = "key-" + i;
                locations.put(k, tier.append(value(k, i + 1, 0, bytes(i, 200 * 1024))));
                assertThat(tier.usedBytes()).isLessThanOrEqualTo(4 * MiB);
            }
            tier.flush();

            List<Long> evictedIds = evicted.stream().map(Region::id).toList();
            assertThat(evictedIds).as("oldest first").isSorted().doesNotHaveDuplicates().startsWith(0L, 1L, 2L);
            assertThat(evictedIds.getLast() - evictedIds.getFirst() + 1).isEqualTo(evictedIds.size());
            assertThat(tier.evictedRegions()).isEqualTo(evicted.size());
            Set<Long> regionIds = new HashSet<>(locations.values().stream().map(l -> l.region().id()).toList());
            assertThat(regionIds).hasSizeGreaterThan(4);
            for (Region r : evicted) {
                assertThat(r.isEvicted()).isTrue();
                assertThat(Files.exists(r.path())).isFalse();
            }
            for (var e : locations.entrySet()) {
                if (!e.getValue().region().isEvicted()) {
                    assertThat(read(tier, e.getValue(), e.getKey())).isEqualTo(bytes(keyIndex(e.getKey()), 200 * 1024));
                }
            }
        }
        try (DiskTier tier = open(4 * MiB, MiB)) {
            List<String> surviving = locations.entrySet().stream().filter(e -> !e.getValue().region().isEvicted())
                    .map(Map.Entry::getKey).toList();
            // The region before the oldest was evicted: its summary names its records (reported as damaged, which
            // drops nothing that survived).
            assertThat(recovered.stream().filter(r -> r.key() != null).map(r -> new String(r.key())).toList())
                    .isEqualTo(surviving);
        }
    }

    @Test
    void refusesRecordsLargerThanMaxRecordLength() throws IOException {
        try (DiskTier tier = open(4 * MiB, MiB)) {
            assertThat(tier.maxRecordLength()).isEqualTo(3 * MiB);
            for (int i = 0; i < 8; i++) {
                tier.append(value("small-" + i, i + 1, 0, bytes(i, 300 * 1024)));
            }
            int fits = (int) (3 * MiB) - RecordFormat.HEADER_SIZE - RecordFormat.TRAILER_SIZE - key("big").length;
            assertThatThrownBy(() -> tier.append(value("big", 10, 0, new byte[fits + 1])))
                    .isInstanceOf(DiskFullException.class);

            DiskLocation big = tier.append(value("big", 11, 0, bytes(11, fits)));
            tier.flush();
            assertThat(big.recordLength() + RecordFormat.TRAILER_SIZE).isEqualTo(tier.maxRecordLength());
            assertThat(tier.usedBytes()).isLessThanOrEqualTo(tier.budget());
            assertThat(read(tier, big, "big")).isEqualTo(bytes(11, fits));
        }
    }

    @Test
    void readerHoldingARegionFinishesAfterItsEviction() throws IOException {
        try (DiskTier tier = open(4 * MiB, MiB)) {
            DiskLocation first = tier.append(value("first", 1, 0, bytes(1, 100_000)));
            tier.flush();
            Region region = first.region();
            assertThat(region.tryRetain()).isTrue();
            for (int i = 0; evicted.isEmpty(); i++) {
                tier.append(value("filler-" + i, i + 2, 0, bytes(i, 500_000)));
            }
            assertThat(evicted.getFirst()).isSameAs(region);
            assertThat(Files.exists(region.path())).isFalse();

            assertThat(read(tier, first, "first")).isEqualTo(bytes(1, 100_000));
            region.release();
            assertThat(region.tryRetain()).as("fully released after eviction").isFalse();
        }
    }

    @Test
    void largeRecordsReadDirectlyMatchThePageCachePathAtEveryAlignment() throws IOException {
        try (DiskTier tier = open(64 * MiB, 16 * MiB)) {
            assertThat(tier.directIo()).as("the test directory's filesystem takes O_DIRECT").isTrue();
            Map<String, byte[]> values = new LinkedHashMap<>();
            Map<String, DiskLocation> locations = new LinkedHashMap<>();
            // Lengths around the direct threshold and around block multiples, so that records start and end at
            // every kind of offset within a 4 KiB block (the small one shifts the next by a few bytes).
            int[] lengths = {DiskTier.DIRECT_READ_MIN, 4 * (int) MiB, 4 * (int) MiB + 1, 3, 200_000 - 17, 7, 65_536 * 3};
            for (int i = 0; i < lengths.length; i++) {
                String k = "key-" + i;
                values.put(k, bytes(i, lengths[i]));
                locations.put(k, tier.append(value(k, i + 1, 0, values.get(k))));
            }
            tier.flush(); // the last record ends the file mid-block: its direct read comes back short
            for (var e : values.entrySet()) {
                DiskLocation loc = locations.get(e.getKey());
                // Buffers whose address is off by every amount the slack must absorb.
                boolean large = loc.recordLength() >= DiskTier.DIRECT_READ_MIN;
                for (int shift : new int[] {0, 1, DiskTier.ALIGN - 1}) {
                    long before = tier.directReadCount();
                    java.nio.ByteBuffer dst = java.nio.ByteBuffer.allocateDirect(DiskTier.readLength(loc) + shift);
                    dst.position(shift);
                    java.nio.ByteBuffer got = tier.read(loc, key(e.getKey()), dst);
                    byte[] out = new byte[got.remaining()];
                    got.get(out);
                    assertThat(out).as(e.getKey() + " shifted " + shift).isEqualTo(e.getValue());
                    assertThat(tier.directReadCount() - before).as(e.getKey() + " read directly").isEqualTo(large ? 1 : 0);
                }
                // A buffer without the slack (or on the heap) reads through the page cache, as before.
                java.nio.ByteBuffer exact = java.nio.ByteBuffer.allocate(Math.toIntExact(loc.recordLength()));
                long before = tier.directReadCount();
                java.nio.ByteBuffer got = tier.read(loc, key(e.getKey()), exact);
                assertThat(got.remaining()).isEqualTo(e.getValue().length);
                assertThat(tier.directReadCount()).isEqualTo(before);
            }

            // A byte flipped on disk fails the checksum on the direct path too; a file cut short is no value.
            DiskLocation big = locations.get("key-1");
            try (var ch = java.nio.channels.FileChannel.open(big.region().path(),
                    java.nio.file.StandardOpenOption.WRITE)) {
                ch.write(java.nio.ByteBuffer.wrap(new byte[] {(byte) ~values.get("key-1")[1_000_000]}),
                        big.offset() + big.valueStart() + 1_000_000);
            }
            assertThatThrownBy(() -> read(tier, big, "key-1")).isInstanceOf(CorruptRecordException.class);
            DiskLocation last = locations.get("key-6");
            try (var ch = java.nio.channels.FileChannel.open(last.region().path(),
                    java.nio.file.StandardOpenOption.WRITE)) {
                ch.truncate(last.offset() + last.recordLength() - 5000);
            }
            assertThatThrownBy(() -> read(tier, last, "key-6")).isInstanceOf(CorruptRecordException.class)
                    .hasMessageContaining("cut short");
            assertThat(read(tier, locations.get("key-2"), "key-2")).isEqualTo(values.get("key-2"));
        }
    }

    @Test
    void directWritesLeaveEachFileEndingAtItsLastRecordAndRecoverWhole() throws IOException {
        Map<String, byte[]> values = new LinkedHashMap<>();
        Map<String, DiskLocation> locations = new LinkedHashMap<>();
        long direct;
        try (DiskTier tier = open(256 * MiB, 16 * MiB)) {
            assertThat(tier.directIo()).isTrue();
            Random random = new Random(3);
            for (int i = 0; i < 120; i++) {
                String k = "key-" + i;
                // Tiny records (tombstone-sized), ones around a block and the direct threshold, and ones larger
                // than the 4 MiB write buffer, flushed after 1 to 4 records: flushes start and end anywhere in a block.
                int length = switch (random.nextInt(5)) {
                    case 0 -> random.nextInt(200);
                    case 1 -> DiskTier.ALIGN - 60 + random.nextInt(120);
                    case 2 -> DiskTier.DIRECT_WRITE_MIN - 5000 + random.nextInt(10_000);
                    case 3 -> random.nextInt(1 << 20);
                    default -> 4 * (int) MiB + random.nextInt((int) MiB);
                };
                values.put(k, bytes(i, length));
                locations.put(k, tier.append(value(k, i + 1, 0, values.get(k))));
                if (random.nextInt(3) == 0) {
                    tier.flush();
                    DiskLocation last = locations.get(k);
                    assertThat(Files.size(last.region().path())).as("file of %s after a flush", k)
                            .isEqualTo(last.region().size());
                }
            }
            tier.flush();
            for (var e : values.entrySet()) {
                assertThat(read(tier, locations.get(e.getKey()), e.getKey())).as(e.getKey()).isEqualTo(e.getValue());
            }
            direct = tier.directWriteBytes();
            assertThat(direct).as("bytes written with O_DIRECT").isGreaterThan(100 * MiB);
        }
        try (DiskTier tier = open(256 * MiB, 16 * MiB)) {
            assertThat(stats.droppedRecords()).isZero();
            assertThat(stats.damagedRegions()).isZero();
            Map<String, DiskLocation> found = new LinkedHashMap<>();
            for (RecoveredRecord r : recovered) {
                if (r.key() != null && r.type() == RecordFormat.TYPE_VALUE) {
                    found.put(new String(r.key()), r.location());
                }
            }
            assertThat(found.keySet()).containsExactlyElementsOf(values.keySet());
            for (var e : values.entrySet()) {
                assertThat(read(tier, found.get(e.getKey()), e.getKey())).as(e.getKey()).isEqualTo(e.getValue());
            }
        }
    }

    @Test
    void openRefusesABudgetBelowTwoRegions() {
        assertThatThrownBy(() -> open(3 * MiB, 2 * MiB)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least two regions");
    }

    private static int keyIndex(String key) {
        return Integer.parseInt(key.substring(key.indexOf('-') + 1));
    }

    /** The value of an expiry record: the sequence number of the version it applies to, little-endian. */
    private static byte[] targetOf(long valueSeq) {
        return java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(valueSeq).array();
    }
}
