package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/**
 * kill -9 in a loop under write load, every key checked after every restart against what the writers were told: a
 * key holds its last acknowledged version, the version whose write was in flight at the kill, or nothing (a value
 * never demoted to disk dies with the process, README "Limits"); never an older version, never a deleted value, never
 * bytes of no version; and a key nobody wrote during a cycle keeps exactly what the previous restart showed (it was on
 * disk then, and the disk budget is far above what the test writes, so no region eviction can excuse a loss). What
 * each restart shows becomes the truth the next cycle's writers build on.
 */
class KillLoopIT {
    private static final int KEYS = 300;
    private static final int WRITERS = 3;
    private static final int CYCLES = Integer.getInteger("kvtier.it.killCycles", 8);
    /** Value bytes one cycle may write: 8 cycles stay far below the 4 GiB disk budget, so nothing is evicted. */
    private static final long CYCLE_BYTES = 160L << 20;

    @TempDir
    Path tmp;

    /** What the writers were told, per key: the last acknowledged version (0 = absent) and the one in flight. */
    private final long[] acked = new long[KEYS];
    private final ConcurrentHashMap<Integer, Long> inFlight = new ConcurrentHashMap<>();
    private final AtomicLong versions = new AtomicLong();
    /** Keys written (or deleted) since the last restart, acknowledged or not. */
    private final java.util.Set<Integer> touched = ConcurrentHashMap.newKeySet();
    private final AtomicLong cycleBytes = new AtomicLong();

    @Test
    void everyKeyIsItsLastAcknowledgedVersionOrAbsentAfterEachKill() throws Exception {
        KvtierProcess node = KvtierProcess.start(tmp.resolve("data"), "--memory", "16m", "--disk", "4g");
        long checks = 0;
        long present = 0;
        try (node) {
            for (int cycle = 0; cycle < CYCLES; cycle++) {
                writeUntilKilled(node, cycle);
                node.restart();
                int[] seen = verifyAndAdopt(node, cycle);
                checks += KEYS;
                present += seen[0];
            }
            assertThat(node.logText()).doesNotContain("OutOfMemoryError");
        }
        System.out.printf("kill -9 loop: %d cycles, %d key checks, %d present, %d absent%n", CYCLES, checks, present,
                checks - present);
        assertThat(present).as("values demoted before a kill survive it").isPositive();
    }

    /** Runs the writers for a random 0.8-2.4 s (past a warm-up of acknowledged writes), then kill -9. */
    private void writeUntilKilled(KvtierProcess node, int cycle) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        cycleBytes.set(0);
        CountDownLatch warmedUp = new CountDownLatch(WRITERS);
        Thread[] writers = new Thread[WRITERS];
        for (int w = 0; w < WRITERS; w++) {
            int writer = w;
            writers[w] = Thread.ofPlatform().start(() -> write(node, cycle * WRITERS + writer, writer, stop,
                    warmedUp));
        }
        warmedUp.await();
        Thread.sleep(800 + new SplittableRandom(cycle).nextInt(1600));
        node.kill();
        stop.set(true);
        for (Thread t : writers) {
            t.join();
        }
    }

    /** One writer owns the keys congruent to {@code writer} modulo WRITERS, so per-key order is the writer's. */
    private void write(KvtierProcess node, long seed, int writer, AtomicBoolean stop, CountDownLatch warmedUp) {
        SplittableRandom rnd = new SplittableRandom(seed);
        boolean warm = false;
        try (Jedis jedis = new Jedis("127.0.0.1", node.port(), 30_000)) {
            for (int op = 0; !stop.get(); op++) {
                int size = (1 << 10) + rnd.nextInt(127 << 10);
                if (cycleBytes.addAndGet(size) > CYCLE_BYTES) {
                    if (!warm) {
                        warm = true;
                        warmedUp.countDown();
                    }
                    Thread.sleep(20); // this cycle's volume is written: idle until the kill
                    continue;
                }
                int k = rnd.nextInt(KEYS / WRITERS) * WRITERS + writer;
                boolean delete = rnd.nextInt(100) < 15;
                long v = delete ? 0 : versions.incrementAndGet();
                inFlight.put(k, v);
                touched.add(k);
                if (delete) {
                    jedis.del(key(k));
                } else {
                    jedis.set(key(k), Payloads.make(k, v, size));
                }
                acked[k] = v;
                inFlight.remove(k);
                if (op == 100 && !warm) {
                    warm = true;
                    warmedUp.countDown();
                }
            }
        } catch (Exception connectionKilled) {
            // expected: the node dies under the writer
        } finally {
            if (!warm) {
                warmedUp.countDown();
            }
        }
    }

    /** Checks every key, then makes what it found the acknowledged state; returns {present, absent}. */
    private int[] verifyAndAdopt(KvtierProcess node, int cycle) throws Exception {
        int present = 0;
        try (Jedis jedis = new Jedis("127.0.0.1", node.port(), 30_000)) {
            for (int k = 0; k < KEYS; k++) {
                byte[] v = jedis.get(key(k));
                long found = 0;
                if (v != null) {
                    present++;
                    found = Payloads.versionOf(k, v);
                    assertThat(found).as("cycle %d: key %d holds bytes of no version", cycle, k).isPositive();
                }
                Long flying = inFlight.get(k);
                if (!touched.contains(k)) {
                    assertThat(found).as("cycle %d: key %d was not written since the last restart", cycle, k)
                            .isEqualTo(acked[k]);
                } else if (found != 0) {
                    assertThat(found).as("cycle %d: key %d: acknowledged %d, in flight %s", cycle, k, acked[k],
                            flying).isIn(acked[k], flying == null ? -1L : flying);
                }
                acked[k] = found;
            }
        }
        inFlight.clear();
        touched.clear();
        return new int[] {present, KEYS - present};
    }

    private static byte[] key(int i) {
        return ("kl:" + i).getBytes(StandardCharsets.UTF_8);
    }
}
