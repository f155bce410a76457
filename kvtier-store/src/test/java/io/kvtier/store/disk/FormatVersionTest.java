package io.kvtier.store.disk;

import static io.kvtier.store.disk.Records.bytes;
import static io.kvtier.store.disk.Records.key;
import static io.kvtier.store.disk.Records.read;
import static io.kvtier.store.disk.Records.value;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Record format versions: version 3 carries each value's cluster version through a restart; regions written by
 * version 2 (built here byte by byte from its documented layout, not by the code under test) are still read, their
 * values with cluster version 0, next to version-3 regions appended after the upgrade.
 */
class FormatVersionTest {
    private static final long MiB = 1L << 20;

    @TempDir
    Path dir;
    private final List<RecoveredRecord> recovered = new ArrayList<>();

    private DiskTier open() throws IOException {
        recovered.clear();
        return DiskTier.open(dir, 16 * MiB, 4 * MiB, r -> { }, recovered::add, s -> { });
    }

    @Test
    void clusterVersionsSurviveARestart() throws IOException {
        List<DiskLocation> written = new ArrayList<>();
        try (DiskTier tier = open()) {
            written.add(tier.append(value("a", 1, 0, bytes(1, 1000), 7L << 40 | 3)));
            written.add(tier.append(value("b", 2, 0, bytes(2, 100), 0)));
        }
        try (DiskTier tier = open()) {
            assertThat(recovered).extracting(RecoveredRecord::version).containsExactly(7L << 40 | 3, 0L);
            assertThat(read(tier, recovered.get(0).location(), "a")).isEqualTo(bytes(1, 1000));
        }
    }

    @Test
    void aVersionTwoRegionIsReadWithVersionZeroBesideNewRegions() throws IOException {
        ByteBuffer v2 = ByteBuffer.allocate(4096).order(ByteOrder.LITTLE_ENDIAN);
        writeV2(v2, "old", 1, 1, bytes(3, 300));
        writeV2(v2, "gone", 2, 1, bytes(4, 40));
        writeV2(v2, "gone", 3, 2, new byte[0]); // a tombstone
        Files.write(Region.pathFor(dir, 0), java.util.Arrays.copyOf(v2.array(), v2.position()));

        try (DiskTier tier = open()) {
            assertThat(recovered).extracting(RecoveredRecord::seq).containsExactly(1L, 2L, 3L);
            assertThat(recovered).allSatisfy(r -> assertThat(r.version()).isZero());
            assertThat(recovered.get(0).location().region().layout()).isEqualTo(RecordFormat.Layout.V2);
            assertThat(read(tier, recovered.get(0).location(), "old")).isEqualTo(bytes(3, 300));
            DiskLocation fresh = tier.append(value("new", 4, 0, bytes(5, 500), 9));
            assertThat(fresh.region().layout()).as("appends start a region of their own").isEqualTo(
                    RecordFormat.Layout.V3);
            assertThat(fresh.region().id()).isEqualTo(1);
        }
        try (DiskTier tier = open()) {
            assertThat(recovered).extracting(RecoveredRecord::seq).containsExactly(1L, 2L, 3L, 4L);
            assertThat(recovered.get(3).version()).isEqualTo(9);
            assertThat(read(tier, recovered.get(0).location(), "old")).isEqualTo(bytes(3, 300));
            assertThat(read(tier, recovered.get(3).location(), "new")).isEqualTo(bytes(5, 500));
        }
    }

    /** Appends one record of format version 2 (48-byte header, see RecordFormat's history) to {@code buf}. */
    private static void writeV2(ByteBuffer buf, String k, long seq, int type, byte[] value) {
        byte[] key = key(k);
        int start = buf.position();
        CRC32C valueCrc = new CRC32C();
        valueCrc.update(value);
        buf.putInt(0x4B565432).putInt(0).putLong(seq).putLong(seq).putLong(0).putInt(key.length)
                .putInt(value.length).put((byte) type).put((byte) 0).put((byte) 0).put((byte) 0)
                .putInt((int) valueCrc.getValue());
        CRC32C headerCrc = new CRC32C();
        headerCrc.update(buf.array(), start + 8, 40);
        headerCrc.update(key);
        buf.putInt(start + 4, (int) headerCrc.getValue());
        buf.put(key).put(value);
        int trailer = buf.position();
        buf.putInt(0x4B565445).putInt(0).putLong(seq).putLong(RecordFormat.fingerprint(key))
                .putInt(48 + key.length + value.length).put((byte) type).put((byte) 0).put((byte) 0).put((byte) 0);
        CRC32C trailerCrc = new CRC32C();
        trailerCrc.update(buf.array(), trailer + 8, 24);
        buf.putInt(trailer + 4, (int) trailerCrc.getValue());
    }
}
