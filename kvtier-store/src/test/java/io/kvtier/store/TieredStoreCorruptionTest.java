package io.kvtier.store;

import static io.kvtier.store.TestStore.MiB;
import static io.kvtier.store.TestStore.join;
import static io.kvtier.store.TestStore.key;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.store.disk.RecordFormat;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 10, repro 8: one flipped bit anywhere in a value record, a tombstone or an expiry record (every header field,
 * key, value and trailer field) never serves wrong bytes, never brings back a deleted or overwritten value, affects
 * only the damaged key, and truncates nothing; a restart after that gives the same answer.
 */
class TieredStoreCorruptionTest {
    private static final int BYSTANDERS = 60;
    private static final long MEMORY = 4 * MiB;
    private static final long DISK = 64 * MiB;
    private static final long HOUR = 3_600_000;

    @TempDir
    static Path template;
    @TempDir
    Path dir;
    private static long expiryAt;

    /** The victims: which key's newest record of which type is hit. */
    enum Victim {
        OVERWRITTEN_VALUE("over", RecordFormat.TYPE_VALUE),
        TOMBSTONE_OF_AN_OVERWRITE("over", RecordFormat.TYPE_TOMBSTONE),
        TOMBSTONE_OF_A_DELETE("del", RecordFormat.TYPE_TOMBSTONE),
        EXPIRY("exp", RecordFormat.TYPE_EXPIRY);

        final String key;
        final byte type;

        Victim(String key, byte type) {
            this.key = key;
            this.type = type;
        }
    }

    /**
     * Session 1 writes version 1 of "over", "del", "exp" and a third of the bystanders; session 2 overwrites "over",
     * deletes "del", sets an expiry on "exp" (all three then on disk, so each writes a tombstone or expiry record) and
     * writes the other bystanders around them.
     */
    @BeforeAll
    static void writeTemplate() throws IOException {
        try (TestStore s = TestStore.open(template, MEMORY, DISK)) {
            for (String k : List.of("over", "del", "exp")) {
                s.put(k, Values.of(k, 1, 3000));
            }
            putBystanders(s, 0, BYSTANDERS / 3);
        }
        try (TestStore s = TestStore.open(template, MEMORY, DISK)) {
            putBystanders(s, BYSTANDERS / 3, 2 * BYSTANDERS / 3);
            s.put("over", Values.of("over", 2, 2500));
            assertThat(s.remove("del")).isTrue();
            expiryAt = System.currentTimeMillis() + HOUR;
            assertThat(join(s.store.setExpiry(key("exp"), expiryAt, ExpireCondition.ALWAYS))).isTrue();
            putBystanders(s, 2 * BYSTANDERS / 3, BYSTANDERS);
        }
    }

    private static void putBystanders(TestStore s, int from, int to) {
        for (int i = from; i < to; i++) {
            s.put("other-" + i, Values.of("other-" + i, i, 100 + 97 * i));
        }
    }

    static Stream<Arguments> flips() {
        List<Arguments> all = new ArrayList<>();
        for (Victim v : Victim.values()) {
            for (String field : List.of("magic", "header crc", "seq", "written", "expireAt", "keyLength",
                    "valueLength", "type", "reserved", "value crc", "cluster version", "key", "value", "trailer magic", "trailer crc",
                    "trailer seq", "trailer fingerprint", "trailer length", "trailer type", "trailer reserved")) {
                if (field.equals("value") && v.type == RecordFormat.TYPE_TOMBSTONE) {
                    continue;
                }
                all.add(Arguments.of(v, field, false));
                all.add(Arguments.of(v, field, true));
            }
        }
        return all.stream();
    }

    @ParameterizedTest(name = "{0}: bit flip in {1} (high byte: {2})")
    @MethodSource("flips")
    void oneFlippedBitDropsAtMostTheDamagedKeyAndNeverServesAnOlderVersion(Victim victim, String field,
                                                                           boolean highByte) throws IOException {
        copy(template, dir);
        RecordAt record = newest(victim.key, victim.type);
        long at = record.offset + offsetIn(record, field, highByte);
        flipBit(record.file, at, highByte ? 0x40 : 0x01);
        long bytesBefore = regionBytes();

        for (int restart = 0; restart < 2; restart++) {
            try (TestStore s = TestStore.open(dir, MEMORY, DISK)) {
                assertVictim(s, victim, field);
                assertBystandersExact(s);
                assertThat(s.store.keysDroppedForDamage()).as("keys dropped for damage").isBetween(0L, 1L);
            }
        }
        assertThat(regionBytes()).as("nothing truncated").isEqualTo(bytesBefore);
        if (!field.startsWith("trailer")) {
            assertThat(names()).as("the damaged region is quarantined").anyMatch(n -> n.endsWith(".damaged.kvr"));
        }
    }

    @Test
    void damageToBothAHeaderAndItsTrailerFallsBackToTheBroadRuleAndStillResurrectsNothing() throws IOException {
        copy(template, dir);
        RecordAt tombstone = newest("del", RecordFormat.TYPE_TOMBSTONE);
        flipBit(tombstone.file, tombstone.offset + 8, 0x01);
        flipBit(tombstone.file, tombstone.offset + tombstone.footprint() - 24, 0x01);
        try (TestStore s = TestStore.open(dir, MEMORY, DISK)) {
            assertThat(s.read("del")).as("deleted key").isNull();
            assertThat(s.read("over")).satisfiesAnyOf(b -> assertThat(b).isNull(),
                    b -> assertThat(Values.check("over", b)).isEqualTo(2));
            for (int i = 0; i < BYSTANDERS; i++) {
                byte[] b = s.read("other-" + i);
                if (b != null) {
                    assertThat(b).isEqualTo(Values.of("other-" + i, i, 100 + 97 * i));
                }
            }
        }
    }

    private static void assertVictim(TestStore s, Victim victim, String field) {
        byte[] value = s.read(victim.key);
        switch (victim) {
            case OVERWRITTEN_VALUE, TOMBSTONE_OF_AN_OVERWRITE -> {
                if (value != null) {
                    assertThat(Values.check("over", value)).as("version of over after a flip in %s", field)
                            .isEqualTo(2);
                }
            }
            case TOMBSTONE_OF_A_DELETE -> assertThat(value).as("deleted key after a flip in %s", field).isNull();
            case EXPIRY -> {
                if (value != null) {
                    assertThat(Values.check("exp", value)).isEqualTo(1);
                    assertThat(s.store.expireAt(key("exp"))).as("expiry of exp after a flip in %s", field)
                            .isEqualTo(expiryAt);
                }
            }
        }
        if (!field.startsWith("trailer") && victim != Victim.TOMBSTONE_OF_AN_OVERWRITE) {
            assertThat(value).as("%s after a flip in %s of its newest record", victim.key, field).isNull();
        }
    }

    private static void assertBystandersExact(TestStore s) {
        for (int i = 0; i < BYSTANDERS; i++) {
            assertThat(s.read("other-" + i)).as("bystander other-%d", i)
                    .isEqualTo(Values.of("other-" + i, i, 100 + 97 * i));
        }
    }

    /** Where in a record (from its start) the first or last byte of {@code field} lies. */
    private static long offsetIn(RecordAt r, String field, boolean last) {
        long trailer = RecordFormat.HEADER_SIZE + r.keyLength + r.valueLength;
        long[] range = switch (field) {
            case "magic" -> new long[] {0, 3};
            case "header crc" -> new long[] {4, 7};
            case "seq" -> new long[] {8, 15};
            case "written" -> new long[] {16, 23};
            case "expireAt" -> new long[] {24, 31};
            case "keyLength" -> new long[] {32, 35};
            case "valueLength" -> new long[] {36, 39};
            case "type" -> new long[] {40, 40};
            case "reserved" -> new long[] {41, 43};
            case "value crc" -> new long[] {44, 47};
            case "cluster version" -> new long[] {48, 55};
            case "key" -> new long[] {56, 56 + r.keyLength - 1};
            case "value" -> new long[] {56 + r.keyLength, trailer - 1};
            case "trailer magic" -> new long[] {trailer, trailer + 3};
            case "trailer crc" -> new long[] {trailer + 4, trailer + 7};
            case "trailer seq" -> new long[] {trailer + 8, trailer + 15};
            case "trailer fingerprint" -> new long[] {trailer + 16, trailer + 23};
            case "trailer length" -> new long[] {trailer + 24, trailer + 27};
            case "trailer type" -> new long[] {trailer + 28, trailer + 28};
            case "trailer reserved" -> new long[] {trailer + 29, trailer + 31};
            default -> throw new IllegalArgumentException(field);
        };
        return last ? range[1] : range[0];
    }

    /** One record of a region file, found by walking the file with the lengths in its headers. */
    record RecordAt(Path file, long offset, int keyLength, int valueLength, byte type, long seq, String key) {
        long footprint() {
            return RecordFormat.footprint(keyLength, valueLength);
        }
    }

    private RecordAt newest(String key, byte type) throws IOException {
        RecordAt best = null;
        for (RecordAt r : records()) {
            if (r.key.equals(key) && r.type == type && (best == null || r.seq > best.seq)) {
                best = r;
            }
        }
        assertThat(best).as("a record of %s of type %d", key, type).isNotNull();
        return best;
    }

    private List<RecordAt> records() throws IOException {
        List<RecordAt> all = new ArrayList<>();
        for (Path file : regionFiles()) {
            byte[] bytes = Files.readAllBytes(file);
            ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
            for (int pos = 0; pos < bytes.length; ) {
                int k = b.getInt(pos + 32);
                int v = b.getInt(pos + 36);
                all.add(new RecordAt(file, pos, k, v, b.get(pos + 40), b.getLong(pos + 8),
                        new String(bytes, pos + RecordFormat.HEADER_SIZE, k)));
                pos += (int) RecordFormat.footprint(k, v);
            }
        }
        return all;
    }

    private List<Path> regionFiles() throws IOException {
        try (Stream<Path> list = Files.list(dir)) {
            return list.filter(p -> p.getFileName().toString().endsWith(".kvr")).sorted().toList();
        }
    }

    private long regionBytes() throws IOException {
        long total = 0;
        for (Path p : regionFiles()) {
            total += Files.size(p);
        }
        return total;
    }

    private List<String> names() throws IOException {
        return regionFiles().stream().map(p -> p.getFileName().toString()).toList();
    }

    private static void copy(Path from, Path to) throws IOException {
        try (Stream<Path> list = Files.list(from)) {
            for (Path p : list.filter(p -> p.getFileName().toString().endsWith(".kvr")).toList()) {
                Files.copy(p, to.resolve(p.getFileName()));
            }
        }
    }

    private static void flipBit(Path file, long offset, int mask) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.read(b, offset);
            b.put(0, (byte) (b.get(0) ^ mask)).rewind();
            ch.write(b, offset);
        }
    }
}
