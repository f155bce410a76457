package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/**
 * redis-py's asyncio client (Debian's python3-redis) replaying LMCache's Redis connector: {@code lmcache_replay.py}
 * stores 64 chunks of 256 KiB to 4 MiB as kv_bytes + 28-byte metadata key pairs, eight at a time, reads them back,
 * reads them all again once they no longer fit the 64 MiB memory tier, and deletes them.
 */
class RedisPyIT {
    private static final Path SCRIPT = KvtierProcess.ROOT.resolve("kvtier-it/src/test/python/lmcache_replay.py");
    private static final int CHUNKS = 64;

    @TempDir
    static Path tmp;
    static KvtierProcess node;

    @BeforeAll
    static void startNode() throws IOException {
        node = KvtierProcess.start(tmp.resolve("node"), "--memory", "64m");
    }

    @AfterAll
    static void stopNode() throws InterruptedException {
        if (node != null) {
            node.stop();
        }
    }

    @Test
    void lmcacheConnectorSequenceRoundTripsEveryChunk() throws IOException, InterruptedException {
        Tools.Result r = Tools.run(Duration.ofMinutes(3), "/usr/bin/python3", SCRIPT.toString(),
                "--port", Integer.toString(node.port()), "--chunks", Integer.toString(CHUNKS), "--concurrency", "8",
                "--min-size", Integer.toString(256 << 10), "--max-size", Integer.toString(4 << 20), "--seed", "7");
        String summary = r.stdout().strip();
        assertThat(r.exitCode()).as("exit code; stdout %s; stderr %s", summary, r.stderr()).isZero();

        assertThat(summary).as("no errors").contains("\"errors\": []");
        assertThat(field(summary, "chunks")).isEqualTo(CHUNKS);
        assertThat(field(summary, "mismatches")).isZero();
        assertThat(field(summary, "sets")).isEqualTo(2 * CHUNKS);
        assertThat(field(summary, "exists_hits")).as("store and retrieve phases").isEqualTo(4 * CHUNKS);
        assertThat(field(summary, "gets")).isEqualTo(4 * CHUNKS);
        assertThat(field(summary, "deletes")).isEqualTo(2 * CHUNKS);
        assertThat(field(summary, "misses_after_delete")).isEqualTo(CHUNKS);
        long written = field(summary, "kv_bytes_written");
        assertThat(written).as("more than the memory tier holds").isGreaterThan(64L << 20);
        assertThat(field(summary, "kv_bytes_read")).isEqualTo(2 * written);

        try (Jedis jedis = new Jedis("127.0.0.1", node.port())) {
            assertThat(jedis.keys("*kv_bytes")).isEmpty();
            assertThat(jedis.keys("*metadata")).isEmpty();
            String tiers = jedis.info("tiers");
            assertThat(info(tiers, "demotions")).as("chunks moved to disk").isPositive();
            assertThat(info(tiers, "disk_hits")).as("chunks read back from disk").isPositive();
        }
    }

    private static long field(String json, String name) {
        Matcher m = Pattern.compile("\"" + name + "\": (\\d+)").matcher(json);
        assertThat(m.find()).as("summary has %s: %s", name, json).isTrue();
        return Long.parseLong(m.group(1));
    }

    private static long info(String info, String name) {
        Matcher m = Pattern.compile("(?m)^" + name + ":(\\d+)\r?$").matcher(info);
        assertThat(m.find()).as("INFO has %s: %s", name, info).isTrue();
        return Long.parseLong(m.group(1));
    }
}
