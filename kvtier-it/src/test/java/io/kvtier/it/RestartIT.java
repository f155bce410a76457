package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/** What survives a restart: everything after SIGTERM; after kill -9, each key's last acknowledged value or nothing. */
class RestartIT {
    @TempDir
    Path tmp;

    @Test
    void gracefulShutdownKeepsEveryValueDeleteAndExpiry() throws Exception {
        KvtierProcess node = KvtierProcess.start(tmp.resolve("data"), "--memory", "16m", "--disk", "1g");
        try (node) {
            try (Jedis jedis = new Jedis("127.0.0.1", node.port(), 30_000)) {
                for (int i = 0; i < 100; i++) {
                    jedis.set(key(i), Payloads.make(i, 1, 512 << 10));
                }
                for (int i = 0; i < 100; i += 3) {
                    jedis.set(key(i), Payloads.make(i, 2, 300 << 10)); // overwrite: old versions sit on disk
                }
                for (int i = 1; i < 100; i += 5) {
                    jedis.del(key(i));
                }
                jedis.set("ttl:long".getBytes(), "v".getBytes());
                jedis.expire("ttl:long", 3600);
                jedis.set("small", "value");
            }
            assertThat(node.stop()).isIn(0, 143);
            assertThat(node.logText()).contains("store closed: wrote").contains("shutdown complete");
            node.restart();
            try (Jedis jedis = new Jedis("127.0.0.1", node.port(), 30_000)) {
                for (int i = 0; i < 100; i++) {
                    byte[] v = jedis.get(key(i));
                    if (i % 5 == 1) {
                        assertThat(v).as("deleted key %d", i).isNull();
                    } else {
                        assertThat(v).as("key %d", i).isNotNull();
                        assertThat(Payloads.versionOf(i, v)).as("key %d", i).isEqualTo(i % 3 == 0 ? 2 : 1);
                    }
                }
                assertThat(jedis.get("small")).isEqualTo("value");
                assertThat(jedis.ttl("ttl:long")).isBetween(3500L, 3600L);
            }
        }
    }

    @Test
    void killDuringWritesLeavesEachKeyAtItsLastAcknowledgedValueOrAbsent() throws Exception {
        int keys = 200;
        KvtierProcess node = KvtierProcess.start(tmp.resolve("crash"), "--memory", "16m", "--disk", "1g");
        try (node) {
            long[] acked = new long[keys];       // last acknowledged version; 0 = absent
            ConcurrentHashMap<Integer, Long> inFlight = new ConcurrentHashMap<>();
            AtomicBoolean stop = new AtomicBoolean();
            CountDownLatch warmedUp = new CountDownLatch(1);
            Thread writer = Thread.ofPlatform().start(() -> {
                SplittableRandom rnd = new SplittableRandom(42);
                long version = 0;
                try (Jedis jedis = new Jedis("127.0.0.1", node.port(), 30_000)) {
                    for (int op = 0; !stop.get(); op++) {
                        int k = rnd.nextInt(keys);
                        boolean delete = rnd.nextInt(100) < 15;
                        long v = delete ? 0 : ++version;
                        inFlight.put(k, v);
                        if (delete) {
                            jedis.del(key(k));
                        } else {
                            jedis.set(key(k), Payloads.make(k, v, (128 << 10) + rnd.nextInt(896 << 10)));
                        }
                        acked[k] = v;
                        inFlight.remove(k);
                        if (op == 400) {
                            warmedUp.countDown();
                        }
                    }
                } catch (Exception connectionKilled) {
                    // expected: the node dies under us
                } finally {
                    warmedUp.countDown();
                }
            });
            warmedUp.await();
            node.kill();
            stop.set(true);
            writer.join();
            node.restart();
            String log = node.logText();
            assertThat(log).containsPattern("recovered \\d+ keys .* dropped \\d+ torn or corrupt records");
            int present = 0;
            try (Jedis jedis = new Jedis("127.0.0.1", node.port(), 30_000)) {
                for (int k = 0; k < keys; k++) {
                    byte[] v = jedis.get(key(k));
                    if (v == null) {
                        continue;
                    }
                    present++;
                    long version = Payloads.versionOf(k, v);
                    assertThat(version).as("key %d holds bytes of no version", k).isPositive();
                    assertThat(version).as("key %d: acked %d, in flight %s", k, acked[k], inFlight.get(k))
                            .isIn(acked[k], inFlight.getOrDefault(k, -1L));
                }
            }
            System.out.printf("kill -9: %d of %d keys present after restart; recovery log:%n%s%n", present, keys,
                    log.lines().filter(l -> l.contains("recovered")).reduce((a, b) -> b).orElse(""));
            assertThat(present).as("values demoted before the kill survive").isPositive();
        }
    }

    private static byte[] key(int i) {
        return ("k:" + i).getBytes(StandardCharsets.UTF_8);
    }
}
