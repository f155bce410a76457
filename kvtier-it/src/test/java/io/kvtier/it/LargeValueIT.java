package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * Values larger than the memory tier go straight to disk and come back intact, across a restart, without the
 * process growing by their size; values larger than a limit get a clear error and the connection lives on.
 */
class LargeValueIT {
    private static final long MEMORY = 16L << 20;
    private static final long OVERHEAD = (512L + 256 + 256) << 20;

    @TempDir
    Path tmp;

    @Test
    void valuesLargerThanMemoryStreamToDiskAndSurviveARestart() throws Exception {
        int[] sizes = {9 << 20, 100 << 20, 300 << 20};
        try (KvtierProcess node = KvtierProcess.start(tmp.resolve("data"), "--memory", "16m", "--disk", "2g")) {
            try (Jedis jedis = new Jedis("127.0.0.1", node.port(), 120_000)) {
                for (int i = 0; i < sizes.length; i++) {
                    assertThat(jedis.set(key(i), Payloads.make(i, 7, sizes[i]))).isEqualTo("OK");
                    assertThat(node.anonymousRss()).isLessThan(MEMORY + OVERHEAD);
                }
                assertAllIntact(jedis, sizes);
                assertThat(node.anonymousRss()).isLessThan(MEMORY + OVERHEAD);
                assertThat(SwapIT.field(jedis.info("tiers"), "disk_entries")).isEqualTo(sizes.length);
            }
            node.stop();
            node.restart();
            try (Jedis jedis = new Jedis("127.0.0.1", node.port(), 120_000)) {
                assertAllIntact(jedis, sizes);
                jedis.del(key(1));
                assertThat(jedis.exists(key(1))).isFalse();
            }
            node.stop();
            node.restart();
            try (Jedis jedis = new Jedis("127.0.0.1", node.port(), 120_000)) {
                assertThat(jedis.exists(key(1))).as("deleted huge value stays deleted").isFalse();
                assertThat(Payloads.versionOf(2, jedis.get(key(2)))).isEqualTo(7);
            }
        }
    }

    @Test
    void tooLargeValuesAreRefusedWithAClearErrorAndTheConnectionSurvives() throws Exception {
        try (KvtierProcess node = KvtierProcess.start(tmp.resolve("limits"), "--memory", "16m", "--disk", "64m",
                "--max-value", "128m");
             Jedis jedis = new Jedis("127.0.0.1", node.port(), 60_000)) {
            assertThatThrownBy(() -> jedis.set(key(0), new byte[100 << 20]))
                    .isInstanceOf(JedisDataException.class)
                    .hasMessageContaining("exceeds what the disk tier can hold");
            assertThat(jedis.ping()).isEqualTo("PONG");
            assertThat(jedis.set("after", "still works")).isEqualTo("OK");
            assertThat(jedis.get("after")).isEqualTo("still works");
        }
    }

    @Test
    void mgetOfMoreDiskBytesThanTheReadStagingAnswersAndOtherReadersAreNotStarved() throws Exception {
        int n = 7;
        int size = 48 << 20; // 7 x 48 MiB = 336 MiB on disk, more than the 256 MiB of disk-read staging
        try (KvtierProcess node = KvtierProcess.start(tmp.resolve("mget"), "--memory", "16m", "--disk", "1g");
             Jedis jedis = new Jedis("127.0.0.1", node.port(), 120_000);
             Jedis other = new Jedis("127.0.0.1", node.port(), 120_000)) {
            byte[][] keys = new byte[n][];
            for (int i = 0; i < n; i++) {
                keys[i] = key(i);
                jedis.set(keys[i], Payloads.make(i, 3, size));
            }
            java.util.List<byte[]> values = jedis.mget(keys);
            assertThat(values).hasSize(n);
            for (int i = 0; i < n; i++) {
                assertThat(Payloads.versionOf(i, values.get(i))).as("element %d", i).isEqualTo(3);
            }
            assertThat(Payloads.versionOf(1, other.get(keys[1]))).isEqualTo(3);
            assertThat(node.anonymousRss()).isLessThan(MEMORY + OVERHEAD);
        }
    }

    @Test
    void refusesKeysLongerThanSixtyFourKibibytesAndKeepsTheRegionIntact() throws Exception {
        try (KvtierProcess node = KvtierProcess.start(tmp.resolve("longkey"), "--memory", "4m", "--disk", "64m")) {
            try (Jedis jedis = new Jedis("127.0.0.1", node.port(), 30_000)) {
                jedis.set("before", "1");
                assertThatThrownBy(() -> jedis.set(new byte[70_000], "v".getBytes()))
                        .isInstanceOf(JedisDataException.class)
                        .hasMessageContaining("key of 70000 bytes exceeds the maximum key length of 65536 bytes");
                for (int i = 0; i < 5; i++) {
                    jedis.set("after" + i, "v" + i);
                }
            }
            node.stop();
            node.restart();
            try (Jedis jedis = new Jedis("127.0.0.1", node.port(), 30_000)) {
                assertThat(jedis.get("before")).isEqualTo("1");
                assertThat(jedis.get("after4")).isEqualTo("v4");
            }
        }
    }

    private static void assertAllIntact(Jedis jedis, int[] sizes) {
        for (int i = 0; i < sizes.length; i++) {
            byte[] v = jedis.get(key(i));
            assertThat(v).as("value %d", i).isNotNull().hasSize(sizes[i]);
            assertThat(Payloads.versionOf(i, v)).as("value %d", i).isEqualTo(7);
        }
    }

    private static byte[] key(int i) {
        return ("huge:" + i).getBytes(StandardCharsets.UTF_8);
    }
}
