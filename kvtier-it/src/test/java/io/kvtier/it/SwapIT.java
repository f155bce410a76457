package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/**
 * The tiering promise end to end: a working set 16x the memory budget is swapped to disk, not dropped, and the
 * process stays within its memory bound while doing it.
 */
class SwapIT {
    private static final long MEMORY = 64L << 20;
    private static final int VALUE = 1 << 20;
    private static final int COUNT = 1024; // 1 GiB of distinct values
    /** The fixed overhead README.md states for the test heap (-Xmx512m): heap, disk-read staging, JVM and Netty. */
    private static final long OVERHEAD = (512L + 256 + 256) << 20;

    @TempDir
    Path tmp;

    @Test
    void swapsAGibibyteThroughA64MiBMemoryTierWithoutLosingAByte() throws Exception {
        try (KvtierProcess node = KvtierProcess.start(tmp.resolve("data"), "--memory", "64m", "--disk", "4g");
             Jedis jedis = new Jedis("127.0.0.1", node.port(), 30_000)) {
            AtomicLong maxRss = new AtomicLong();
            Thread sampler = Thread.ofPlatform().daemon().start(() -> {
                while (!Thread.currentThread().isInterrupted()) {
                    try {
                        maxRss.accumulateAndGet(node.anonymousRss(), Math::max);
                        Thread.sleep(50);
                    } catch (Exception e) {
                        return;
                    }
                }
            });
            for (int i = 0; i < COUNT; i++) {
                assertThat(jedis.set(key(i), Payloads.make(i, 1, VALUE))).isEqualTo("OK");
            }
            int misses = 0;
            int wrong = 0;
            for (int i = 0; i < COUNT; i++) {
                byte[] v = jedis.get(key(i));
                if (v == null) {
                    misses++;
                } else if (Payloads.versionOf(i, v) != 1) {
                    wrong++;
                }
            }
            sampler.interrupt();
            String tiers = jedis.info("tiers");
            System.out.printf("swap: %d values of %d bytes through %d MiB: misses=%d wrong=%d maxRssAnon=%d MiB%n%s%n",
                    COUNT, VALUE, MEMORY >> 20, misses, wrong, maxRss.get() >> 20, tiers);
            assertThat(misses).isZero();
            assertThat(wrong).isZero();
            assertThat(field(tiers, "demotions")).isGreaterThanOrEqualTo(COUNT - 64);
            assertThat(field(tiers, "evictions")).isZero();
            assertThat(maxRss.get()).isLessThanOrEqualTo(MEMORY + OVERHEAD);
        }
    }

    static byte[] key(int i) {
        return ("swap:" + i).getBytes(StandardCharsets.UTF_8);
    }

    static long field(String info, String name) {
        for (String line : info.split("\r\n")) {
            if (line.startsWith(name + ":")) {
                return Long.parseLong(line.substring(name.length() + 1).trim());
            }
        }
        throw new AssertionError("INFO has no field " + name + ":\n" + info);
    }
}
