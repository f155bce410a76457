package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * Issue 10, repros 6 and 7 with real server processes: two servers on one data directory (also after it was deleted
 * under the first), and a data directory on a 96 MiB tmpfs that is smaller than --disk, filled up, or made unwritable.
 * The tmpfs cases need root (mount, chattr) and are skipped with a message otherwise.
 */
class DiskFaultIT {
    private static final int MiB = 1 << 20;
    private static final Pattern LOST = Pattern.compile("shutdown LOST (\\d+) keys \\((\\d+) bytes of values\\)");

    @TempDir
    Path tmp;
    private Path mount;

    @AfterEach
    void unmount() throws Exception {
        if (mount != null) {
            run("chattr", "-R", "-i", mount.toString());
            run("umount", "-l", mount.toString());
        }
    }

    @Test
    void secondServerCannotOpenALockedDirectoryNorMixWithTheFirstAfterTheDirectoryWasDeleted() throws Exception {
        Path dir = tmp.resolve("data");
        try (KvtierProcess first = KvtierProcess.start(dir, "--memory", "16m", "--disk", "64m")) {
            assertThatThrownBy(() -> KvtierProcess.start(dir, "--memory", "16m", "--disk", "64m").close())
                    .hasMessageContaining("is in use by another kvtier process");
            int firstAcked = 0;
            try (Jedis a = first.jedis(30_000)) {
                for (; firstAcked < 10; firstAcked++) {
                    a.set(key("a", firstAcked), Payloads.make(firstAcked, 1, 100 << 10));
                }
            }
            deleteRecursively(dir);
            try (KvtierProcess second = KvtierProcess.start(dir, "--memory", "16m", "--disk", "64m")) {
                try (Jedis b = second.jedis(30_000)) {
                    for (int i = 0; i < 20; i++) {
                        b.set(key("b", i), Payloads.make(i, 2, 100 << 10));
                    }
                }
                firstAcked += writeUntilRefused(first, "a", firstAcked, 100 << 10);
                assertThat(first.stop()).as("exit code of the node that lost its directory").isEqualTo(1);
                assertThat(lostKeys(first.logText())).as("keys the first node reports lost").isEqualTo(firstAcked);
                assertThat(second.stop()).isIn(0, 143);
                second.restart();
                try (Jedis b = second.jedis(30_000)) {
                    assertThat(b.dbSize()).as("keys after restart: the second node's only").isEqualTo(20);
                    for (int i = 0; i < 20; i++) {
                        assertThat(Payloads.versionOf(i, b.get(key("b", i)))).isEqualTo(2);
                    }
                }
            }
        }
    }

    /**
     * Issue 30: a node whose disk tier spans two directories (--disk-dir) loses one while it runs: the keys only it
     * held are misses, every other key is served with its value, writes go on, and a restart keeps what the other
     * directory holds and serves nothing from the lost one.
     */
    @Test
    void losingOneOfTwoDiskDirectoriesCostsOnlyItsKeys() throws Exception {
        Path dir = tmp.resolve("data");
        Path second = tmp.resolve("second-drive");
        int n = 300;
        try (KvtierProcess node = KvtierProcess.start(dir, "--memory", "16m", "--disk", "256m", "--disk-dir",
                second.toString())) {
            try (Jedis j = node.jedis(30_000)) {
                for (int i = 0; i < n; i++) {
                    j.set(key("k", i), Payloads.make(i, 1, 256 << 10)); // 75 MiB through 16 MiB of memory
                }
                assertThat(j.info("tiers")).contains("disk_directories:2");
                deleteRecursively(second);
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (!j.info("tiers").contains("disk_directories_live:1")) {
                    assertThat(System.nanoTime()).as("the lost directory noticed within 10 s").isLessThan(deadline);
                    Thread.sleep(50);
                }
                int served = 0;
                for (int i = 0; i < n; i++) {
                    byte[] v = j.get(key("k", i));
                    if (v != null) {
                        assertThat(Payloads.versionOf(i, v)).as("k:%d", i).isEqualTo(1);
                        served++;
                    }
                }
                System.out.printf("one of two disk directories lost: %d of %d keys still served%n", served, n);
                assertThat(served).as("keys of the directory left, and those in memory").isBetween(1, n - 1);
                for (int i = 0; i < 100; i++) {
                    assertThat(j.set(key("w", i), Payloads.make(i, 2, 256 << 10))).isEqualTo("OK");
                }
            }
            assertThat(node.stop()).isIn(0, 143);
            node.restart();
            try (Jedis j = node.jedis(30_000)) {
                for (int i = 0; i < 100; i++) {
                    assertThat(Payloads.versionOf(i, j.get(key("w", i)))).as("w:%d after restart", i).isEqualTo(2);
                }
                assertThat(j.info("tiers")).contains("disk_directories_live:2"); // the path is back, empty
            }
        }
    }

    @Test
    void diskLargerThanTheFilesystemIsClampedAndAGracefulStopLosesNothingThatFits() throws Exception {
        Path dir = mountTmpfs().resolve("fits");
        try (KvtierProcess node = KvtierProcess.start(dir, "--memory", "64m", "--disk", "1g")) {
            assertThat(node.logText()).contains("--disk 1073741824 bytes is more than the filesystem");
            try (Jedis j = node.jedis(30_000)) {
                for (int i = 0; i < 60; i++) {
                    j.set(key("k", i), Payloads.make(i, 1, MiB));
                }
            }
            assertThat(node.stop()).isIn(0, 143);
            assertThat(node.logText()).doesNotContain("LOST");
            node.restart();
            try (Jedis j = node.jedis(30_000)) {
                for (int i = 0; i < 60; i++) {
                    assertThat(Payloads.versionOf(i, j.get(key("k", i)))).as("key %d", i).isEqualTo(1);
                }
            }
        }
    }

    @Test
    void memoryLargerThanTheFilesystemReportsExactlyWhatAGracefulStopLosesAndExitsNonZero() throws Exception {
        Path dir = mountTmpfs().resolve("full");
        try (KvtierProcess node = KvtierProcess.start(dir, "--memory", "256m", "--disk", "1g")) {
            int acked = 132;
            try (Jedis j = node.jedis(30_000)) {
                for (int i = 0; i < acked; i++) {
                    j.set(key("k", i), Payloads.make(i, 1, MiB));
                }
            }
            assertThat(node.stop()).as("exit code after losing values").isEqualTo(1);
            Matcher m = LOST.matcher(node.logText());
            assertThat(m.find()).as("the loss line in:\n%s", node.logText()).isTrue();
            long lost = Long.parseLong(m.group(1));
            assertThat(Long.parseLong(m.group(2))).isEqualTo(lost * MiB);
            node.restart();
            int present = presentAfterRestart(node, acked);
            assertThat(present + lost).as("present after restart plus reported lost").isEqualTo(acked);
            assertThat(present).as("what the filesystem held").isGreaterThan(40);
            System.out.printf("DiskFaultIT: memory > filesystem: %d acknowledged, %d reported lost, %d present%n",
                    acked, lost, present);
        }
    }

    @Test
    void fullFilesystemFailsWritesAtOnceLogsItOnceAndRecoversWhenSpaceReturns() throws Exception {
        Path mnt = mountTmpfs();
        Path dir = mnt.resolve("ff");
        try (KvtierProcess node = KvtierProcess.start(dir, "--memory", "16m", "--disk", "1g")) {
            Path filler = mnt.resolve("filler");
            run("fallocate", "-l", Long.toString(Files.getFileStore(mnt).getUsableSpace() - 64 * 1024), filler.toString());
            int acked = writeUntilRefused(node, "k", 0, MiB);
            assertThat(count(node.logText(), "disk tier cannot take writes: ")).as("fault logged once").isEqualTo(1);
            Files.delete(filler);
            try (Jedis j = node.jedis(30_000)) {
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (true) {
                    try {
                        j.set(key("k", acked), Payloads.make(acked, 1, MiB));
                        acked++;
                        break;
                    } catch (JedisDataException e) {
                        assertThat(System.nanoTime()).as("a write succeeds once space is back").isLessThan(deadline);
                        Thread.sleep(200);
                    }
                }
            }
            // The writer logs it once its first demotion batch since the fault is written, and that batch frees the
            // memory a waiting SET takes as it goes: the SET can be answered a moment before the line is written.
            long logDeadline = System.nanoTime() + 10_000_000_000L;
            while (!node.logText().contains("disk tier takes writes again")) {
                assertThat(System.nanoTime()).as("the end of the fault logged within 10 s").isLessThan(logDeadline);
                Thread.sleep(100);
            }
            assertThat(node.stop()).isIn(0, 143);
            node.restart();
            try (Jedis j = node.jedis(30_000)) {
                for (int i = 0; i < acked; i++) {
                    assertThat(Payloads.versionOf(i, j.get(key("k", i)))).as("acknowledged key %d", i).isEqualTo(1);
                }
            }
        }
    }

    @Test
    void unwritableDirectoryFailsWritesAtOnceAndAGracefulStopReportsExactlyWhatItLoses() throws Exception {
        Path dir = mountTmpfs().resolve("ro");
        try (KvtierProcess node = KvtierProcess.start(dir, "--memory", "16m", "--disk", "64m")) {
            try (Jedis j = node.jedis(30_000)) {
                for (int i = 0; i < 8; i++) {
                    j.set(key("k", i), Payloads.make(i, 1, MiB));
                }
            }
            Assumptions.assumeTrue(run("chattr", "+i", dir.toString()) == 0,
                    "chattr +i is not supported here: skipping the unwritable-directory case");
            int acked = 8 + writeUntilRefused(node, "k", 8, MiB);
            assertThat(node.stop()).as("exit code after losing values").isEqualTo(1);
            Matcher m = LOST.matcher(node.logText());
            assertThat(m.find()).as("the loss line in:\n%s", node.logText()).isTrue();
            long lost = Long.parseLong(m.group(1));
            assertThat(run("chattr", "-i", dir.toString())).isZero();
            node.restart();
            int present = presentAfterRestart(node, acked);
            assertThat(present + lost).as("present after restart plus reported lost").isEqualTo(acked);
            System.out.printf("DiskFaultIT: unwritable dir: %d acknowledged, %d reported lost, %d present%n",
                    acked, lost, present);
        }
    }

    /**
     * SETs values of {@code size} bytes from key {@code from} on until the node refuses one; asserts that every
     * refusal (five in a row) comes fast, with the disk-fault error. Returns how many were acknowledged.
     */
    private static int writeUntilRefused(KvtierProcess node, String prefix, int from, int size) {
        int acked = 0;
        try (Jedis j = node.jedis(60_000)) {
            int refused = 0;
            for (int i = from; refused < 5; i++) {
                assertThat(i - from).as("a write was refused").isLessThan(400);
                long start = System.nanoTime();
                try {
                    j.set(key(prefix, i), Payloads.make(i, 1, size));
                    acked++;
                } catch (JedisDataException e) {
                    long millis = (System.nanoTime() - start) / 1_000_000;
                    assertThat(e.getMessage()).contains("disk tier cannot take writes");
                    assertThat(millis).as("a refused write answers at once, not after a 30 s wait").isLessThan(2_000);
                    System.out.printf("DiskFaultIT: %s: %d writes acknowledged, then refused in %d ms%n", prefix,
                            acked, millis);
                    refused++;
                    i--; // retry the same key: acknowledged keys stay a prefix
                }
            }
        }
        return acked;
    }

    private Path mountTmpfs() throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("mnt"));
        Assumptions.assumeTrue(run("mount", "-t", "tmpfs", "-o", "size=96m", "tmpfs", dir.toString()) == 0,
                "cannot mount a tmpfs here (needs root): skipping the disk-full and read-only cases");
        mount = dir;
        return dir;
    }

    private static long lostKeys(String log) {
        Matcher m = LOST.matcher(log);
        assertThat(m.find()).as("the loss line in:\n%s", log).isTrue();
        return Long.parseLong(m.group(1));
    }

    private static int count(String text, String what) {
        int n = 0;
        for (int at = text.indexOf(what); at >= 0; at = text.indexOf(what, at + 1)) {
            n++;
        }
        return n;
    }

    private static byte[] key(String prefix, int i) {
        return (prefix + ":" + i).getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    private static int run(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        return p.waitFor();
    }

    /**
     * Deletes {@code dir} under a node that is still running: a file it replaces meanwhile (its store-state, once a
     * second) may vanish after the walk listed it, or appear after it, so the walk is repeated until the directory is
     * gone (at most 20 times).
     */
    private static void deleteRecursively(Path dir) throws IOException {
        for (int attempt = 1; Files.exists(dir); attempt++) {
            try (Stream<Path> all = Files.walk(dir)) {
                for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            } catch (java.nio.file.DirectoryNotEmptyException | java.nio.file.NoSuchFileException
                     | java.io.UncheckedIOException e) {
                if (attempt == 20) {
                    throw e;
                }
            }
        }
    }

    /** How many of keys k:0 .. k:(acked - 1) a restarted node serves, each checked to hold exactly its version 1. */
    private static int presentAfterRestart(KvtierProcess node, int acked) {
        int present = 0;
        try (Jedis j = node.jedis(30_000)) {
            for (int i = 0; i < acked; i++) {
                byte[] v = j.get(key("k", i));
                if (v != null) {
                    assertThat(Payloads.versionOf(i, v)).as("k:%d", i).isEqualTo(1);
                    present++;
                }
            }
        }
        return present;
    }
}
