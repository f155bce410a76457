package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import io.kvtier.cli.HeapSize;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.Response;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * The key index within its heap budget (issue 10, item 3): past {@code --index-memory} a write of a new key gets
 * {@code -OOM} while reads go on, and a node holding five million keys restarts within the heap the launcher
 * computes from its flags.
 */
class IndexMemoryIT {
    @TempDir
    Path tmp;

    @Test
    void writesOfNewKeysGetOomAtTheIndexBudgetWhileReadsGoOn() throws Exception {
        long fits = (1L << 20) / (176 + 16); // IndexBudget.charge of a 16-byte key
        try (KvtierProcess node = KvtierProcess.start(tmp.resolve("small"), "--memory", "16m", "--disk", "64m",
                "--index-memory", "1m"); Jedis jedis = node.jedis(10_000)) {
            Pipeline p = jedis.pipelined();
            List<Response<String>> replies = new ArrayList<>();
            for (int i = 0; i < fits + 100; i++) {
                replies.add(p.set(key(i), "v" + i));
            }
            p.sync();
            long ok = 0;
            for (Response<String> r : replies) {
                try {
                    assertThat(r.get()).isEqualTo("OK");
                    ok++;
                } catch (JedisDataException e) {
                    assertThat(e.getMessage()).startsWith("OOM ").contains("--index-memory");
                }
            }
            assertThat(ok).isEqualTo(fits);
            assertThat(jedis.get(key(0))).isEqualTo("v0");
            assertThat(jedis.set(key(0), "again")).isEqualTo("OK"); // an existing key can be overwritten
            assertThat(jedis.get(key(0))).isEqualTo("again");
            assertThat(jedis.dbSize()).isEqualTo(fits);
            jedis.del(key(1));
            assertThat(jedis.set(key((int) fits + 1), "room")).isEqualTo("OK");
        }
    }

    @Test
    @Tag("long") // a 40 s capacity run; the default tier keeps the budget test
    void fiveMillionKeysRestartWithinTheHeapTheLauncherComputes() throws Exception {
        int keys = 5_000_000;
        // 5 M keys of 16 bytes are charged 5 M x 192 B = 916 MiB: the launcher gives 768m + 1100m + 1100m / 4.
        String[] flags = {"--memory", "64m", "--disk", "1g", "--index-memory", "1100m"};
        Path dir = tmp.resolve("many");
        fill(dir, keys, HeapSize.flag(flags), 64L << 20, 1L << 30, 1100L << 20);
        KvtierProcess node = KvtierProcess.startWithLauncherHeap(Duration.ofMinutes(3), dir, flags);
        try (node; Jedis jedis = node.jedis(30_000)) {
            assertThat(node.logText()).contains("kvtier: heap -Xmx2143m").contains("recovered " + keys + " keys")
                    .doesNotContain("OutOfMemoryError");
            assertThat(jedis.dbSize()).isEqualTo(keys);
            for (int i = 0; i < keys; i += 499_999) {
                assertThat(jedis.get(IndexFiller.key(i))).as("key %d", i).isEqualTo(IndexFiller.value(i));
            }
            assertThat(jedis.set("one-more", "v")).isEqualTo("OK");
        }
    }

    /** Runs {@link IndexFiller} in a JVM of heap {@code xmx} (this test's class path). */
    private static void fill(Path dir, int keys, String xmx, long memory, long disk, long index) throws Exception {
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), xmx,
                "-XX:MaxDirectMemorySize=1t", "--enable-native-access=ALL-UNNAMED", "-cp",
                System.getProperty("java.class.path"), IndexFiller.class.getName(), dir.toString(),
                Integer.toString(keys), Long.toString(memory), Long.toString(disk), Long.toString(index))
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as(out).isZero();
        System.out.println(out.lines().filter(l -> l.startsWith("wrote")).findFirst().orElse(out));
    }

    private static String key(int i) {
        return IndexFiller.key(i);
    }
}
