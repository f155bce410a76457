package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

/**
 * Issue 10 item 1 and the SCAN part of item 7, against a real node holding 1 M small keys: KEYS and SCAN with
 * whole-keyspace and pathological patterns (CVE-2022-36021's) never stall other clients, whose PINGs keep answering
 * within 100 ms; SCAN cursors are stateless (an old one still works after thousands of others) and a full scan
 * returns every key present throughout, once.
 */
class KeyspaceWalkIT {
    private static final int KEYS = 1_000_000;
    private static final String STARS = "a*a*a*a*a*a*a*a*a*a*a*a*a*b";
    private static final long PING_BOUND_MS = 100;

    @TempDir
    static Path tmp;
    static KvtierProcess node;

    @BeforeAll
    static void loadAMillionKeys() throws Exception {
        node = KvtierProcess.start(tmp.resolve("node"), "--memory", "256m", "--disk", "1g",
                "--index-memory", "512m"); // room for the million keys (about 200 B each)
        try (Jedis j = node.jedis(60_000)) {
            Pipeline p = j.pipelined();
            for (int batch = 0; batch < KEYS / 1000; batch++) {
                String[] kv = new String[2000];
                for (int i = 0; i < 1000; i++) {
                    kv[2 * i] = key(batch * 1000 + i);
                    kv[2 * i + 1] = "v";
                }
                p.mset(kv);
                if (batch % 50 == 49) {
                    p.sync();
                }
            }
            p.sync();
            j.set("a".repeat(60), "sixty");
            j.set("a".repeat(64 * 1024 - 1), "long");
            assertThat(j.dbSize()).isEqualTo(KEYS + 2);
        }
    }

    @AfterAll
    static void stop() throws InterruptedException {
        if (node != null) {
            node.close();
        }
    }

    private static String key(int i) {
        return String.format("key:%07d", i);
    }

    @Test
    void keysOfTheWholeKeyspaceKeepsOtherClientsServed() throws Exception {
        List<String> all = whilePinging(j -> new ArrayList<>(j.keys("*")));
        assertThat(all).hasSize(KEYS + 2);
    }

    @Test
    void pathologicalPatternsAreLinearAndKeepOtherClientsServed() throws Exception {
        for (String pattern : List.of(STARS, "*a*b", "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b")) {
            Set<String> found = whilePinging(j -> j.keys(pattern));
            assertThat(found).as("KEYS %s", pattern).isEmpty();
        }
        Set<String> both = whilePinging(j -> j.keys("a*a"));
        assertThat(both).hasSize(2);
        ScanResult<String> page = whilePinging(j -> j.scan("0", new ScanParams().match(STARS).count(100)));
        assertThat(page.getResult()).isEmpty();
        ScanResult<String> all = whilePinging(j -> j.scan("0", new ScanParams().match("*a*b").count(Integer.MAX_VALUE)));
        assertThat(all.getCursor()).isEqualTo("0");
        assertThat(all.getResult()).isEmpty();
    }

    @Test
    void anOldCursorStillWorksAfterThousandsOfOthersAndAFullScanReturnsEveryKeyOnce() throws Exception {
        try (Jedis j = node.jedis(60_000); Jedis churner = node.jedis(60_000)) {
            ScanResult<String> first = j.scan("0", new ScanParams().count(1));
            assertThat(first.getCursor()).isNotEqualTo("0");
            for (int i = 0; i < 5_000; i++) {
                assertThat(j.scan("0", new ScanParams().count(1)).getCursor()).isNotEqualTo("0");
            }
            AtomicBoolean stop = new AtomicBoolean();
            CompletableFuture<Void> churn = CompletableFuture.runAsync(() -> {
                for (int i = 0; !stop.get(); i++) {
                    churner.set("churn:" + i, "x");
                    churner.del("churn:" + (i - 100));
                }
            });
            BitSet seen = new BitSet(KEYS);
            long[] duplicates = {0};
            ScanResult<String> page = first;
            while (true) {
                for (String k : page.getResult()) {
                    if (k.startsWith("key:")) {
                        int i = Integer.parseInt(k.substring(4));
                        if (seen.get(i)) {
                            duplicates[0]++;
                        }
                        seen.set(i);
                    }
                }
                if (page.getCursor().equals("0")) {
                    break;
                }
                page = j.scan(page.getCursor(), new ScanParams().count(2_000));
            }
            stop.set(true);
            churn.get(10, TimeUnit.SECONDS);
            assertThat(duplicates[0]).as("keys returned twice").isZero();
            assertThat(seen.cardinality()).as("distinct keys of the million returned").isEqualTo(KEYS);
        }
    }

    @Test
    void aCursorStaysValidForever() {
        try (Jedis j = node.jedis(10_000)) {
            ScanResult<String> page = j.scan("0", new ScanParams().count(100));
            List<String> again = j.scan(page.getCursor(), new ScanParams().count(100)).getResult();
            assertThat(j.scan(page.getCursor(), new ScanParams().count(100)).getResult())
                    .as("the same cursor, reused, gives the same keys").containsExactlyInAnyOrderElementsOf(again);
            assertThat(j.scan("16383", new ScanParams().count(1)).getCursor()).isEqualTo("0");
            assertThat(j.scan("18446744073709551615").getCursor()).as("any 64-bit cursor is one").isEqualTo("0");
        }
    }

    /**
     * Runs {@code command} on its own connection while four other connections (so at least one shares its event
     * loop) PING in turn; returns its result once a try saw every PING answered within {@link #PING_BOUND_MS}. Up to
     * three tries, so a stray pause of the test machine is not a failure; a frozen loop fails every try.
     */
    private static <T> T whilePinging(Function<Jedis, T> command) throws Exception {
        List<String> slow = new ArrayList<>();
        for (int attempt = 0; attempt < 3; attempt++) {
            try (Jedis worker = node.jedis(120_000)) {
                List<Jedis> pingers = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    pingers.add(node.jedis(10_000));
                }
                try {
                    CompletableFuture<T> result = CompletableFuture.supplyAsync(() -> command.apply(worker));
                    long worst = 0;
                    int pings = 0;
                    for (int i = 0; !result.isDone() || pings < 4; i++) {
                        long start = System.nanoTime();
                        assertThat(pingers.get(i % 4).ping()).isEqualTo("PONG");
                        worst = Math.max(worst, (System.nanoTime() - start) / 1_000_000);
                        pings++;
                        Thread.sleep(2);
                    }
                    T value = result.get(120, TimeUnit.SECONDS);
                    if (worst < PING_BOUND_MS) {
                        return value;
                    }
                    slow.add(worst + " ms (" + pings + " pings)");
                } finally {
                    pingers.forEach(Jedis::close);
                }
            }
        }
        throw new AssertionError("a PING took longer than " + PING_BOUND_MS + " ms in every try: " + slow);
    }
}
