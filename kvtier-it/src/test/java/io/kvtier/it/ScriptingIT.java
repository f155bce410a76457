package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * Scripts against a real node, where redis-server cannot be the reference: they run off the event loop, several at
 * once on distinct keys, one at a time on the same keys; a busy script is stopped by SCRIPT KILL unless it wrote; a
 * script may not touch keys it did not declare.
 */
class ScriptingIT {
    private static final String INCREMENT = "local v = tonumber(redis.call('get', KEYS[1]) or '0') "
            + "redis.call('set', KEYS[1], v + 1) return v + 1";

    @TempDir
    Path tmp;

    @Test
    void scriptsOnTheSameKeyRunOneAtATime() throws Exception {
        try (KvtierProcess node = KvtierProcess.start(tmp.resolve("node"), "--memory", "64m")) {
            int clients = 4;
            int each = 300;
            List<CompletableFuture<Void>> all = new ArrayList<>();
            for (int c = 0; c < clients; c++) {
                all.add(CompletableFuture.runAsync(() -> {
                    try (Jedis j = node.jedis(10_000)) {
                        for (int i = 0; i < each; i++) {
                            j.eval(INCREMENT, 1, "counter");
                        }
                    }
                }));
            }
            CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
            try (Jedis j = node.jedis(10_000)) {
                // A lost update (two scripts reading the same value) would leave it short.
                assertThat(j.get("counter")).isEqualTo(Integer.toString(clients * each));
            }
        }
    }

    /** Issue 29: a script's error reply counts in INFO errorstats as Redis counts it; INFO says how many are cached. */
    @Test
    void scriptErrorsCountInErrorstatsAndTheCacheIsReported() throws Exception {
        try (KvtierProcess node = KvtierProcess.start(tmp.resolve("node"), "--memory", "64m");
             Jedis j = node.jedis(10_000)) {
            j.configResetStat();
            assertThatThrownBy(() -> j.eval("return redis.error_reply('MYERR boom')", 0))
                    .hasMessage("MYERR boom");
            assertThat(j.info("errorstats")).contains("errorstat_MYERR:count=1");
            assertThat(j.info("memory")).contains("number_of_cached_scripts:1");
        }
    }

    @Test
    void aBusyScriptIsKilledUnlessItWroteAndNeverHoldsUpOtherKeys() throws Exception {
        try (KvtierProcess node = KvtierProcess.start(tmp.resolve("node"), "--memory", "64m");
             Jedis looping = node.jedis(60_000);
             Jedis other = node.jedis(10_000)) {
            CompletableFuture<String> loop = CompletableFuture.supplyAsync(() -> {
                try {
                    return String.valueOf(looping.eval("local i = 0 while true do i = i + 1 end", 1, "held"));
                } catch (JedisDataException e) {
                    return e.getMessage();
                }
            });
            Thread.sleep(500);
            assertThat(other.ping()).isEqualTo("PONG"); // the event loops are free
            assertThat(other.eval("return redis.call('set', KEYS[1], 'x')", 1, "free")).isEqualTo("OK");
            assertThatThrownBy(() -> other.scriptKill()).hasMessage("NOTBUSY No scripts in execution right now.");
            Thread.sleep(5_000); // past the busy threshold (Redis's lua-time-limit)
            assertThat(other.scriptKill()).isEqualTo("OK");
            assertThat(loop.get(10, TimeUnit.SECONDS))
                    .startsWith("ERR Script killed by user with SCRIPT KILL... script: ");
            // Its key is free again.
            assertThat(other.eval("return redis.call('set', KEYS[1], 'y')", 1, "held")).isEqualTo("OK");

            CompletableFuture.runAsync(() -> {
                try {
                    looping.eval("redis.call('set', KEYS[1], 'z') while true do end", 1, "stuck");
                } catch (RuntimeException expected) {
                    // the connection is closed with the node
                }
            });
            Thread.sleep(5_500);
            assertThatThrownBy(() -> other.scriptKill()).hasMessageStartingWith("UNKILLABLE Sorry the script already "
                    + "executed write commands against the dataset.");
            assertThat(other.get("free")).isEqualTo("x"); // other keys are served while it runs
        }
    }

    @Test
    void inAClusterAScriptRunsOnItsSlotsPrimaryAndItsWritesReachTheBackup() throws Exception {
        try (TestCluster cluster = TestCluster.start(Files.createDirectories(tmp.resolve("cluster")), 3, 0)) {
            String body = "redis.call('set', KEYS[1], ARGV[1]) redis.call('set', KEYS[2], ARGV[1]) "
                    + "return redis.call('mget', KEYS[1], KEYS[2])";
            KvtierProcess primary = null;
            for (KvtierProcess n : cluster.nodes) {
                try (Jedis j = n.jedis(10_000)) {
                    try {
                        assertThat(j.eval(body, 2, "{s}a", "{s}b", "v1")).isEqualTo(List.of("v1", "v1"));
                        primary = n;
                    } catch (JedisDataException e) {
                        assertThat(e.getMessage()).startsWith("MOVED "); // every client: scripts are not proxied
                    }
                }
            }
            assertThat(primary).as("the node that ran it").isNotNull();
            try (Jedis j = primary.jedis(10_000)) {
                assertThatThrownBy(() -> j.eval("return 1", 2, "{s}a", "other"))
                        .hasMessage("CROSSSLOT Keys in request don't hash to the same slot");
                assertThat(j.eval("return redis.call('ping')", 0)).isEqualTo("PONG");
                // Queued in a transaction, it runs under EXEC's locks (taking them again would wait forever).
                redis.clients.jedis.Transaction t = j.multi();
                t.set("{s}c", "v2");
                t.eval("return redis.call('get', KEYS[1])", 1, "{s}c");
                assertThat(CompletableFuture.supplyAsync(t::exec).get(10, TimeUnit.SECONDS))
                        .containsExactly("OK", "v2");
            }
            // Scripts and plain writes on one key at once: the script takes the key gate and then the keys' locks, in
            // the order commands and transactions take them, so neither waits for the other forever.
            KvtierProcess onPrimary = primary;
            List<CompletableFuture<Void>> all = new ArrayList<>();
            for (int c = 0; c < 3; c++) {
                int client = c;
                all.add(CompletableFuture.runAsync(() -> {
                    try (Jedis j = onPrimary.jedis(10_000)) {
                        for (int i = 0; i < 100; i++) {
                            if (client == 0) {
                                j.expire("{s}n", 1000);
                            } else {
                                j.eval(INCREMENT, 1, "{s}n");
                            }
                        }
                    }
                }));
            }
            CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
            try (Jedis j = primary.jedis(10_000)) {
                assertThat(j.get("{s}n")).isEqualTo("200");
            }
            KvtierProcess killed = primary;
            killed.kill();
            // The backup took over the slot with the script's writes.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            String seen = null;
            while (!"v1".equals(seen) && System.nanoTime() < deadline) {
                for (KvtierProcess n : cluster.nodes) {
                    if (n != killed) {
                        try (Jedis j = n.jedis(5_000)) {
                            seen = "v2".equals(j.get("{s}c")) ? j.get("{s}b") : null;
                        } catch (RuntimeException notYet) {
                            seen = null;
                        }
                    }
                }
                Thread.sleep(200);
            }
            assertThat(seen).isEqualTo("v1");
        }
    }

    @Test
    void aScriptMayTouchOnlyTheKeysItDeclares() throws Exception {
        try (KvtierProcess node = KvtierProcess.start(tmp.resolve("node"), "--memory", "64m");
             Jedis j = node.jedis(10_000)) {
            assertThatThrownBy(() -> j.eval("return redis.call('get', 'undeclared')", 0)).hasMessageStartingWith(
                    "ERR Script attempted to access key 'undeclared' which is not in KEYS");
            assertThatThrownBy(() -> j.eval("return redis.call('mget', KEYS[1], 'b')", 1, "a"))
                    .hasMessageContaining("key 'b' which is not in KEYS");
            assertThat(j.eval("return redis.call('mget', KEYS[1], KEYS[2])", 2, "a", "b"))
                    .isEqualTo(java.util.Arrays.asList(null, null));
        }
    }
}
