package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.testkit.RedisServerProcess;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.TransactionResult;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Response;
import redis.clients.jedis.Transaction;

/**
 * MULTI/EXEC/DISCARD/WATCH through real clients against one node: redis-py's default (transactional) pipeline and its
 * optimistic-locking recipe, compared step by step with redis-server; Jedis and Lettuce transactions; the isolation of
 * a transaction from other clients' commands on its keys; large values inside a transaction kept within the request
 * memory budget; a transaction too large for that budget refused without harming the server.
 */
class TransactionsIT {
    private static final Path SCRIPT = KvtierProcess.ROOT.resolve("kvtier-it/src/test/python/transactions.py");
    private static final int TIMEOUT_MILLIS = 30_000;

    @TempDir
    static Path tmp;
    static KvtierProcess node;

    @BeforeAll
    static void startNode() throws IOException {
        node = KvtierProcess.start(tmp.resolve("node"), "--memory", "64m", "--disk", "1g",
                "--maxmemory-clients", "32m", "--io-threads", "4");
    }

    @AfterAll
    static void stopNode() throws InterruptedException {
        if (node != null) {
            node.stop();
        }
    }

    @Test
    void redisPyTransactionsBehaveAsAgainstRedis() throws Exception {
        Path redisDir = Files.createDirectories(tmp.resolve("redis"));
        String fromRedis;
        try (RedisServerProcess redis = RedisServerProcess.start(redisDir)) {
            fromRedis = runScript(redis.port());
        }
        String fromKvtier = runScript(node.port());
        assertThat(fromKvtier).isEqualTo(fromRedis);
        assertThat(fromKvtier).contains("\"optimistic_increments\": {\"counter\": 400, \"expected\": 400, "
                + "\"failures\": []}");
        assertThat(fromKvtier).contains("\"watch_broken_by_write\": {\"error\": \"WatchError\"");
    }

    private static String runScript(int port) throws IOException, InterruptedException {
        Tools.Result r = Tools.run(Duration.ofMinutes(2), "/usr/bin/python3", SCRIPT.toString(), "--port",
                Integer.toString(port), "--threads", "4", "--increments", "100");
        assertThat(r.exitCode()).as("exit code; stdout %s; stderr %s", r.stdout(), r.stderr()).isZero();
        return r.stdout().strip();
    }

    @Test
    void jedisTransactions() {
        try (Jedis jedis = node.jedis(TIMEOUT_MILLIS); Jedis other = node.jedis(TIMEOUT_MILLIS)) {
            Transaction t = jedis.multi();
            t.set("jtx:a", "1");
            Response<String> a = t.get("jtx:a");
            Response<Long> deleted = t.del("jtx:a", "jtx:none");
            List<Object> results = t.exec();
            assertThat(results).hasSize(3);
            assertThat(a.get()).isEqualTo("1");
            assertThat(deleted.get()).isEqualTo(1L);

            Transaction discarded = jedis.multi();
            discarded.set("jtx:b", "never");
            assertThat(discarded.discard()).isEqualTo("OK");
            assertThat(jedis.get("jtx:b")).isNull();

            jedis.set("jtx:w", "0");
            jedis.watch("jtx:w");
            other.set("jtx:w", "changed");
            Transaction watched = jedis.multi();
            watched.set("jtx:w", "mine");
            assertThat(watched.exec()).as("a watched key changed: nil EXEC").isNull();
            assertThat(jedis.get("jtx:w")).isEqualTo("changed");

            jedis.watch("jtx:w");
            Transaction kept = jedis.multi();
            kept.set("jtx:w", "mine");
            assertThat(kept.exec()).containsExactly("OK");
            assertThat(jedis.get("jtx:w")).isEqualTo("mine");

            Transaction longOne = jedis.multi(); // runs in slices of 256 commands: replies stay in order
            for (int i = 0; i < 1_000; i++) {
                longOne.set("jtx:long", Integer.toString(i));
                longOne.get("jtx:long");
            }
            List<Object> replies = longOne.exec();
            assertThat(replies).hasSize(2_000);
            for (int i = 0; i < 1_000; i++) {
                assertThat(replies.get(2 * i + 1)).isEqualTo(Integer.toString(i));
            }
        }
    }

    @Test
    void lettuceTransactions() {
        RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", node.port()));
        try (StatefulRedisConnection<String, String> conn = client.connect();
             StatefulRedisConnection<String, String> otherConn = client.connect()) {
            RedisCommands<String, String> sync = conn.sync();
            assertThat(sync.multi()).isEqualTo("OK");
            assertThat(sync.set("ltx:a", "1")).as("queued: Lettuce answers null").isNull();
            sync.get("ltx:a");
            sync.strlen("ltx:a");
            TransactionResult result = sync.exec();
            assertThat(result.wasDiscarded()).isFalse();
            assertThat(result.<String>get(0)).isEqualTo("OK");
            assertThat(result.<String>get(1)).isEqualTo("1");
            assertThat(result.<Long>get(2)).isEqualTo(1L);

            sync.watch("ltx:a");
            otherConn.sync().del("ltx:a");
            sync.multi();
            sync.set("ltx:a", "mine");
            assertThat(sync.exec().wasDiscarded()).as("a watched key was deleted").isTrue();
            assertThat(sync.get("ltx:a")).isNull();
        } finally {
            client.shutdown();
        }
    }

    /**
     * A writer sets two keys to the same new value in each transaction while readers read both with MGET and with
     * a second transaction: no reader may ever see the two differ (kvtier runs connections in parallel, so without
     * the key gate, about one read in ten lands between the transaction's two SETs).
     */
    @Test
    void otherClientsNeverSeeATransactionHalfDone() throws Exception {
        int rounds = 1_000;
        AtomicBoolean writing = new AtomicBoolean(true);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try (Jedis setup = node.jedis(TIMEOUT_MILLIS)) {
            setup.mset("iso:{x}:a", "0", "iso:{x}:b", "0");
        }
        try {
            Future<Integer> writer = pool.submit(() -> {
                try (Jedis w = node.jedis(TIMEOUT_MILLIS)) {
                    for (int i = 1; i <= rounds; i++) {
                        Transaction t = w.multi();
                        t.set("iso:{x}:a", Integer.toString(i));
                        for (int k = 0; k < 100; k++) { // widens the window a torn read would fall into
                            t.set("iso:{x}:filler", Integer.toString(k));
                        }
                        t.set("iso:{x}:b", Integer.toString(i));
                        t.exec();
                    }
                    return rounds;
                } finally {
                    writing.set(false);
                }
            });
            List<Future<long[]>> readers = new ArrayList<>();
            for (int r = 0; r < 3; r++) {
                boolean viaTransaction = r == 2;
                readers.add(pool.submit(() -> {
                    long reads = 0;
                    long torn = 0;
                    try (Jedis reader = node.jedis(TIMEOUT_MILLIS)) {
                        while (writing.get()) {
                            List<String> both;
                            if (viaTransaction) {
                                Transaction t = reader.multi();
                                t.get("iso:{x}:a");
                                t.get("iso:{x}:b");
                                both = t.exec().stream().map(String::valueOf).toList();
                            } else {
                                both = reader.mget("iso:{x}:a", "iso:{x}:b");
                            }
                            reads++;
                            if (!both.get(0).equals(both.get(1))) {
                                torn++;
                            }
                        }
                    }
                    return new long[] {reads, torn};
                }));
            }
            assertThat(writer.get(2, TimeUnit.MINUTES)).isEqualTo(rounds);
            long reads = 0;
            for (Future<long[]> f : readers) {
                long[] r = f.get(1, TimeUnit.MINUTES);
                assertThat(r[1]).as("reads that saw a transaction half done").isZero();
                reads += r[0];
            }
            assertThat(reads).as("the readers ran alongside the writer").isGreaterThan(100);
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Eight 8 MiB values in one transaction, more than the 64 MiB memory tier gives one connection's requests
     * (a quarter): the first queue in memory, the rest spill to disk, every one is stored by EXEC, and afterwards the
     * connection holds no request memory.
     */
    @Test
    void largeValuesInsideATransactionStayWithinTheRequestBudget() throws Exception {
        int values = 8;
        byte[][] payload = new byte[values][];
        java.util.Random random = new java.util.Random(11);
        try (Jedis jedis = node.jedis(TIMEOUT_MILLIS); Jedis observer = node.jedis(TIMEOUT_MILLIS)) {
            Transaction t = jedis.multi();
            for (int i = 0; i < values; i++) {
                payload[i] = new byte[8 << 20];
                random.nextBytes(payload[i]);
                t.set(("big:" + i).getBytes(StandardCharsets.UTF_8), payload[i]);
            }
            Response<Long> length = t.strlen("big:7");
            String memory = observer.info("clients");
            assertThat(field(memory, "requests_reserved_bytes")).as("reserved while queued: " + memory)
                    .isPositive().isLessThanOrEqualTo(17L << 20);
            List<Object> results = t.exec();
            assertThat(results).hasSize(values + 1);
            assertThat(length.get()).isEqualTo(8L << 20);
            for (int i = 0; i < values; i++) {
                assertThat(results.get(i)).isEqualTo("OK");
                byte[] back = jedis.get(("big:" + i).getBytes(StandardCharsets.UTF_8));
                assertThat(sha1(back)).as("value " + i).isEqualTo(sha1(payload[i]));
            }
            String after = observer.info("clients");
            assertThat(field(after, "requests_reserved_bytes")).as(after).isZero();
            assertThat(field(after, "requests_spooled_bytes")).as(after).isZero();
            jedis.del("big:0", "big:1", "big:2", "big:3", "big:4", "big:5", "big:6", "big:7");
        }
    }

    /**
     * An MSET of 2,000 values of 16 KiB queued in a transaction: past the connection's reservation cap (16 MiB of the
     * 64 MiB memory tier) the small values go to the request's spool file, which EXEC reads back; every value comes
     * back exactly, and no spool is left.
     */
    @Test
    void smallValuesSpooledInsideATransactionAreStoredByExec() throws Exception {
        int values = 2_000;
        byte[][] args = new byte[2 * values][];
        java.util.Random random = new java.util.Random(12);
        for (int i = 0; i < values; i++) {
            args[2 * i] = ("spooled:" + i).getBytes(StandardCharsets.UTF_8);
            args[2 * i + 1] = new byte[16 << 10];
            random.nextBytes(args[2 * i + 1]);
        }
        try (Jedis jedis = node.jedis(TIMEOUT_MILLIS); Jedis observer = node.jedis(TIMEOUT_MILLIS)) {
            Transaction t = jedis.multi();
            t.mset(args);
            Response<byte[]> last = t.get(args[2 * values - 2]);
            List<Object> results = t.exec();
            assertThat(results).hasSize(2);
            assertThat(results.getFirst()).isEqualTo("OK");
            assertThat(last.get()).isEqualTo(args[2 * values - 1]);
            for (int i = 0; i < values; i += 7) {
                assertThat(jedis.get(args[2 * i])).as("value " + i).isEqualTo(args[2 * i + 1]);
            }
            String after = observer.info("clients");
            assertThat(field(after, "requests_spooled_bytes")).as(after).isZero();
            long deadline = System.nanoTime() + 10_000_000_000L; // the file is deleted on the spool's I/O thread
            while (node.dir().toFile().list((d, name) -> name.endsWith(".spool.tmp")).length > 0
                    && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(node.dir().toFile().list((d, name) -> name.endsWith(".spool.tmp"))).isEmpty();
            for (int i = 0; i < values; i++) {
                jedis.del(args[2 * i]);
            }
        }
    }

    /**
     * Queued commands keep their arguments' heap charged to --maxmemory-clients (32 MiB here) until EXEC: a client
     * that queues 64 MiB of small values is disconnected with Redis's client-memory error, nothing it queued is
     * stored, and other clients go on.
     */
    @Test
    void aTransactionLargerThanTheClientMemoryBudgetIsRefused() throws Exception {
        byte[] value = new byte[8 << 10]; // below the sink threshold: held on the heap while queued
        java.util.Arrays.fill(value, (byte) 'v');
        try (RawConnection raw = new RawConnection(node.port()); Jedis other = node.jedis(TIMEOUT_MILLIS)) {
            assertThat(raw.call("MULTI").escaped()).contains("OK");
            RawReply last = null;
            for (int i = 0; i < 8_192 && (last == null || !last.isError()); i++) {
                last = raw.call(List.of("SET".getBytes(StandardCharsets.UTF_8),
                        ("heap:" + i).getBytes(StandardCharsets.UTF_8), value));
            }
            assertThat(last).isNotNull();
            assertThat(last.isError()).as(last.escaped()).isTrue();
            assertThat(last.escaped()).contains("maxmemory-clients");
            assertThat(other.exists("heap:0")).isFalse();
            assertThat(other.ping()).isEqualTo("PONG");
            assertThat(field(other.info("memory"), "mem_clients_normal")).isLessThan(1L << 20);
        }
    }

    /**
     * Expiry and WATCH as in Redis 7.0 (checked against redis-server 7.0.15 by hand, with sleeps a differential
     * script cannot make): a key that expires after WATCH fails the EXEC; one already expired when watched does not.
     */
    @Test
    void expiryAfterWatchFailsExecButAStaleKeyDoesNot() throws Exception {
        try (Jedis jedis = node.jedis(TIMEOUT_MILLIS)) {
            jedis.set("exp:stale", "1", redis.clients.jedis.params.SetParams.setParams().px(50));
            Thread.sleep(200);
            jedis.watch("exp:stale");
            Transaction t = jedis.multi();
            t.exists("exp:other");
            assertThat(t.exec()).as("watched when already expired").containsExactly(false);

            jedis.set("exp:live", "1", redis.clients.jedis.params.SetParams.setParams().px(300));
            jedis.watch("exp:live");
            Thread.sleep(600);
            Transaction u = jedis.multi();
            u.exists("exp:other");
            assertThat(u.exec()).as("expired after WATCH").isNull();
        }
    }

    /** The cluster's own commands take the key gate themselves: inside MULTI they would wait for their own EXEC. */
    @Test
    void peerCommandsCannotBeQueued() throws Exception {
        try (RawConnection raw = new RawConnection(node.port())) {
            assertThat(raw.call("MULTI").escaped()).isEqualTo("+OK\\r\\n");
            assertThat(raw.call("KVT.FWD", "1", "GET", "peer:k").escaped())
                    .isEqualTo("-ERR Command not allowed inside a transaction\\r\\n");
            assertThat(raw.call("EXEC").escaped()).startsWith("-EXECABORT");
            assertThat(raw.call("PING").escaped()).isEqualTo("+PONG\\r\\n");
        }
    }

    private static long field(String info, String name) {
        Matcher m = Pattern.compile("(?m)^" + name + ":(\\d+)\r?$").matcher(info);
        assertThat(m.find()).as("INFO has %s: %s", name, info).isTrue();
        return Long.parseLong(m.group(1));
    }

    private static String sha1(byte[] b) throws Exception {
        return java.util.HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(b));
    }
}
