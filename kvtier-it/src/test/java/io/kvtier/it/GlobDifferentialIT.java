package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.testkit.RedisServerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

/**
 * KEYS and SCAN MATCH against a real redis-server 7.0 on random binary keys and random patterns made of glob
 * syntax ({@code * ? [ ] ^ - \}), letters and high bytes: kvtier must list exactly the keys Redis lists.
 */
class GlobDifferentialIT {
    private static final byte[] KEY_BYTES = {'a', 'b', '-', ']', '^', '\\', '*', '[', '?', (byte) 0x80, (byte) 0xff};
    private static final byte[] PATTERN_BYTES = {'a', 'b', '*', '*', '?', '[', ']', '^', '-', '\\', (byte) 0x80,
            (byte) 0xff};

    @TempDir
    Path tmp;

    @Test
    void keysAndScanMatchListWhatRedisListsForRandomPatterns() throws Exception {
        Files.createDirectories(tmp.resolve("redis"));
        Random random = new Random(20221);
        try (RedisServerProcess redis = RedisServerProcess.start(tmp.resolve("redis"));
             KvtierProcess kvtier = KvtierProcess.start(tmp.resolve("kvtier"), "--memory", "64m");
             Jedis r = new Jedis("127.0.0.1", redis.port(), 10_000);
             Jedis k = kvtier.jedis(10_000)) {
            for (int i = 0; i < 400; i++) {
                byte[] key = random(random, KEY_BYTES, 1 + random.nextInt(8));
                r.set(key, key);
                k.set(key, key);
            }
            r.set(new byte[0], new byte[] {1});
            k.set(new byte[0], new byte[] {1});
            assertThat(k.dbSize()).isEqualTo(r.dbSize());
            for (int i = 0; i < 3_000; i++) {
                byte[] pattern = random(random, PATTERN_BYTES, random.nextInt(11));
                TreeSet<String> expected = hex(r.keys(pattern));
                assertThat(hex(k.keys(pattern))).as("KEYS %s", HexFormat.of().formatHex(pattern))
                        .isEqualTo(expected);
                if (i % 10 == 0) {
                    assertThat(scanAll(k, pattern)).as("SCAN MATCH %s", HexFormat.of().formatHex(pattern))
                            .isEqualTo(expected);
                }
            }
        }
    }

    private static TreeSet<String> scanAll(Jedis j, byte[] pattern) {
        List<byte[]> keys = new ArrayList<>();
        byte[] cursor = {'0'};
        do {
            ScanResult<byte[]> page = j.scan(cursor, new ScanParams().match(pattern).count(50));
            keys.addAll(page.getResult());
            cursor = page.getCursorAsBytes();
        } while (!(cursor.length == 1 && cursor[0] == '0'));
        return hex(keys);
    }

    private static TreeSet<String> hex(Iterable<byte[]> keys) {
        TreeSet<String> out = new TreeSet<>();
        keys.forEach(key -> out.add(HexFormat.of().formatHex(key)));
        return out;
    }

    private static byte[] random(Random random, byte[] alphabet, int n) {
        byte[] out = new byte[n];
        for (int i = 0; i < n; i++) {
            out[i] = alphabet[random.nextInt(alphabet.length)];
        }
        return out;
    }
}
