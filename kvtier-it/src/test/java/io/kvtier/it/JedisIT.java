package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.RedisProtocol;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

/**
 * Jedis against two real nodes with 64 MiB memory tiers: an open one for the string, key and server commands (binary
 * values from empty to 8 MiB), and one started with {@code --requirepass} for authentication over RESP2 and RESP3.
 */
class JedisIT {
    private static final String PASSWORD = "secret";

    @TempDir
    static Path tmp;
    static KvtierProcess open;
    static KvtierProcess guarded;
    static JedisPooled jedis;

    @BeforeAll
    static void startNodes() throws IOException {
        open = KvtierProcess.start(tmp.resolve("open"), "--memory", "64m");
        guarded = KvtierProcess.start(tmp.resolve("guarded"), "--memory", "64m", "--requirepass", PASSWORD);
        jedis = new JedisPooled("127.0.0.1", open.port());
    }

    @AfterAll
    static void stopNodes() throws InterruptedException {
        if (jedis != null) {
            jedis.close();
        }
        for (KvtierProcess node : new KvtierProcess[] {open, guarded}) {
            if (node != null) {
                node.stop();
            }
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 100, 16_384, 1 << 20, (3 << 20) + 7, 8 << 20})
    void storesAndReturnsBinaryValuesByteForByte(int size) {
        byte[] key = ("bin:" + size).getBytes(StandardCharsets.US_ASCII);
        for (int round = 0; round < 2; round++) {
            byte[] value = randomBytes(size, size * 31L + round);
            assertThat(jedis.set(key, value)).isEqualTo("OK");
            byte[] back = jedis.get(key);
            assertThat(back).as("GET after SET").isNotNull().hasSize(size);
            assertThat(Arrays.mismatch(back, value)).as("first differing byte").isEqualTo(-1);
            assertThat(jedis.strlen(key)).isEqualTo(size);
        }
    }

    /**
     * Large payloads are read from the socket straight into their pages (PayloadLandingAllocator), interleaved here
     * with small commands in one pipeline so that page windows, payload tails and the next commands share reads.
     */
    @Test
    void pipelinedLargeAndSmallValuesLandIntactAndMostPayloadBytesAreReadInPlace() {
        long landedBefore = SwapIT.field(jedis.info("stats"), "total_net_input_landed_bytes");
        int[] sizes = {(1 << 20) + 13, 70_000, 5, 2 << 20, 16_383, (4 << 20) - 1};
        List<byte[]> values = new ArrayList<>();
        try (Jedis conn = new Jedis("127.0.0.1", open.port()); var pipeline = conn.pipelined()) {
            for (int i = 0; i < sizes.length; i++) {
                values.add(randomBytes(sizes[i], 77L * i));
                pipeline.set(("land:" + i).getBytes(StandardCharsets.US_ASCII), values.get(i));
                pipeline.set("land:small:" + i, "v" + i);
            }
            var replies = new ArrayList<redis.clients.jedis.Response<byte[]>>();
            for (int i = 0; i < sizes.length; i++) {
                replies.add(pipeline.get(("land:" + i).getBytes(StandardCharsets.US_ASCII)));
            }
            pipeline.sync();
            for (int i = 0; i < sizes.length; i++) {
                assertThat(Arrays.mismatch(replies.get(i).get(), values.get(i))).as("value %d", i).isEqualTo(-1);
                assertThat(conn.get("land:small:" + i)).isEqualTo("v" + i);
            }
        }
        long payload = Arrays.stream(sizes).asLongStream().sum();
        long landed = SwapIT.field(jedis.info("stats"), "total_net_input_landed_bytes") - landedBefore;
        assertThat(landed).as("payload bytes read in place").isGreaterThan(payload / 2).isLessThanOrEqualTo(payload);
    }

    @Test
    void roleAndInfoReplicationSayThisNodeIsAPrimaryAsRedisDoes() {
        // valkey-glide (LMCache's valkey://) asks for these on connect and refuses a node without a primary role.
        try (redis.clients.jedis.Jedis plain = open.jedis(10_000)) {
            assertThat(plain.role()).containsExactly("master", 0L, List.of());
            String replication = plain.info("replication");
            assertThat(replication).startsWith("# Replication\r\n").contains("\r\nrole:master\r\n")
                    .contains("\r\nconnected_slaves:0\r\n").containsPattern("master_replid:[0-9a-f]{40}\r\n");
            assertThat(plain.info()).contains("# Replication\r\nrole:master\r\n");
        }
    }

    @Test
    void msetAndMgetKeepArgumentOrder() {
        List<String> keysAndValues = new ArrayList<>();
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            keysAndValues.add("m:" + i);
            keysAndValues.add("value " + i);
            keys.add("m:" + i);
        }
        assertThat(jedis.mset(keysAndValues.toArray(String[]::new))).isEqualTo("OK");
        keys.add(5, "m:missing");
        List<String> values = jedis.mget(keys.toArray(String[]::new));
        assertThat(values).hasSize(21);
        assertThat(values.get(5)).isNull();
        assertThat(values.get(0)).isEqualTo("value 0");
        assertThat(values.get(6)).isEqualTo("value 5");
        assertThat(values.get(20)).isEqualTo("value 19");
    }

    @Test
    void expireSetsALifetimeThatTtlReportsAndPersistRemoves() throws InterruptedException {
        jedis.set("ttl:a", "v");
        assertThat(jedis.ttl("ttl:a")).isEqualTo(-1);
        assertThat(jedis.expire("ttl:a", 100)).isEqualTo(1);
        assertThat(jedis.ttl("ttl:a")).isBetween(1L, 100L);
        assertThat(jedis.pttl("ttl:a")).isBetween(1L, 100_000L);
        assertThat(jedis.persist("ttl:a")).isEqualTo(1);
        assertThat(jedis.ttl("ttl:a")).isEqualTo(-1);
        assertThat(jedis.expire("ttl:missing", 100)).isZero();
        assertThat(jedis.ttl("ttl:missing")).isEqualTo(-2);

        assertThat(jedis.expire("ttl:a", -1)).as("expiring in the past deletes").isEqualTo(1);
        assertThat(jedis.exists("ttl:a")).isFalse();

        jedis.set("ttl:short", "v");
        assertThat(jedis.pexpire("ttl:short", 50)).isEqualTo(1);
        awaitGone("ttl:short");
        assertThat(jedis.get("ttl:short")).isNull();
        assertThat(jedis.ttl("ttl:short")).isEqualTo(-2);
    }

    @Test
    void delAndExistsCountOnlyExistingKeys() {
        jedis.set("d:1", "a");
        jedis.set("d:2", "b");
        assertThat(jedis.exists("d:1", "d:2", "d:missing", "d:1")).isEqualTo(3);
        assertThat(jedis.del("d:1", "d:2", "d:missing")).isEqualTo(2);
        assertThat(jedis.exists("d:1", "d:2")).isZero();
        assertThat(jedis.del("d:1")).isZero();
    }

    @Test
    void scanVisitsEachOf500KeysExactlyOnce() {
        Set<String> expected = new HashSet<>();
        List<String> pairs = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            String key = "scan:" + i;
            expected.add(key);
            pairs.add(key);
            pairs.add(Integer.toString(i));
        }
        assertThat(jedis.mset(pairs.toArray(String[]::new))).isEqualTo("OK");

        List<String> matched = scanAll(new ScanParams().match("scan:*").count(37));
        assertThat(matched).as("no key twice").doesNotHaveDuplicates();
        assertThat(new HashSet<>(matched)).isEqualTo(expected);

        List<String> everything = scanAll(new ScanParams());
        assertThat(everything).doesNotHaveDuplicates().containsAll(expected);
    }

    @Test
    void keysMatchesGlobPatterns() {
        for (String k : List.of("kp:alpha", "kp:beta", "kp:bxta", "kp:gamma", "other:beta")) {
            jedis.set(k, "1");
        }
        assertThat(jedis.keys("kp:*")).containsExactlyInAnyOrder("kp:alpha", "kp:beta", "kp:bxta", "kp:gamma");
        assertThat(jedis.keys("kp:b?ta")).containsExactlyInAnyOrder("kp:beta", "kp:bxta");
        assertThat(jedis.keys("kp:[ag]*")).containsExactlyInAnyOrder("kp:alpha", "kp:gamma");
        assertThat(jedis.keys("nothing:*")).isEmpty();
    }

    @Test
    void infoReportsServerClientsAndKeyspace() {
        jedis.set("info:k", "v");
        String info = jedis.info();
        assertThat(info).contains("# Server\r\n", "redis_version:7.0.15\r\n", "tcp_port:" + open.port() + "\r\n",
                "# Clients\r\n", "# Keyspace\r\n");
        assertThat(info).containsPattern("connected_clients:[1-9]\\d*\r\n");
        assertThat(info).containsPattern("db0:keys=[1-9]\\d*,");
        String server = jedis.info("server");
        assertThat(server).startsWith("# Server\r\n").doesNotContain("# Clients");
        assertThat(jedis.dbSize()).isPositive();
    }

    @Test
    void pingAnswersPongOrEchoesItsArgument() {
        assertThat(jedis.ping()).isEqualTo("PONG");
        try (Jedis single = new Jedis("127.0.0.1", open.port())) {
            assertThat(single.ping("hello")).isEqualTo("hello");
        }
    }

    @Test
    void clientSetnameNamesOnlyItsConnection() {
        try (Jedis named = new Jedis("127.0.0.1", open.port()); Jedis other = new Jedis("127.0.0.1", open.port())) {
            assertThat(named.clientSetname("jedis-it")).isEqualTo("OK");
            assertThat(named.clientGetname()).isEqualTo("jedis-it");
            assertThat(other.clientGetname()).isNull();
            assertThat(other.clientList()).contains(" name=jedis-it ");
            assertThatThrownBy(() -> named.clientSetname("two words")).isInstanceOf(JedisDataException.class)
                    .hasMessage("ERR Client names cannot contain spaces, newlines or special characters.");
            assertThat(named.clientGetname()).isEqualTo("jedis-it");
        }
    }

    @Test
    void guardedNodeRefusesCommandsBeforeAuth() {
        try (Jedis j = new Jedis("127.0.0.1", guarded.port())) {
            assertThatThrownBy(() -> j.get("k")).isInstanceOf(JedisDataException.class)
                    .hasMessage("NOAUTH Authentication required.");
            assertThatThrownBy(() -> j.set("k", "v")).hasMessage("NOAUTH Authentication required.");
        }
    }

    @Test
    void guardedNodeRefusesAWrongPassword() {
        try (Jedis j = new Jedis("127.0.0.1", guarded.port())) {
            assertThatThrownBy(() -> j.auth("wrong")).isInstanceOf(JedisDataException.class)
                    .hasMessage("WRONGPASS invalid username-password pair or user is disabled.");
            assertThatThrownBy(() -> j.get("k")).hasMessage("NOAUTH Authentication required.");
        }
        DefaultJedisClientConfig wrong = DefaultJedisClientConfig.builder().password("wrong").build();
        try (JedisPooled pool = new JedisPooled(new HostAndPort("127.0.0.1", guarded.port()), wrong)) {
            assertThatThrownBy(() -> pool.get("k")).hasStackTraceContaining("WRONGPASS");
        }
    }

    @Test
    void guardedNodeServesAfterAuth() {
        try (Jedis j = new Jedis("127.0.0.1", guarded.port())) {
            assertThat(j.auth(PASSWORD)).isEqualTo("OK");
            assertThat(j.set("auth:k", "v")).isEqualTo("OK");
            assertThat(j.get("auth:k")).isEqualTo("v");
            assertThat(j.auth("default", PASSWORD)).isEqualTo("OK");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"RESP2", "RESP3"})
    void guardedNodeAuthenticatesPooledConnectionsFromClientConfig(String protocol) {
        DefaultJedisClientConfig config = DefaultJedisClientConfig.builder().password(PASSWORD)
                .protocol(RedisProtocol.valueOf(protocol)).clientName("pooled-" + protocol).build();
        try (JedisPooled pool = new JedisPooled(new HostAndPort("127.0.0.1", guarded.port()), config)) {
            String key = "pooled:" + protocol;
            assertThat(pool.set(key, "v")).isEqualTo("OK");
            assertThat(pool.get(key)).isEqualTo("v");
            assertThat(pool.get("pooled:missing")).isNull();
            assertThat(pool.del(key)).isEqualTo(1);
        }
    }

    private static List<String> scanAll(ScanParams params) {
        List<String> seen = new ArrayList<>();
        String cursor = ScanParams.SCAN_POINTER_START;
        int calls = 0;
        do {
            ScanResult<String> page = jedis.scan(cursor, params);
            seen.addAll(page.getResult());
            cursor = page.getCursor();
            assertThat(++calls).as("SCAN terminates").isLessThan(100_000);
        } while (!cursor.equals(ScanParams.SCAN_POINTER_START));
        return seen;
    }

    private static void awaitGone(String key) throws InterruptedException {
        for (int i = 0; i < 1000 && jedis.exists(key); i++) {
            Thread.sleep(10);
        }
    }

    static byte[] randomBytes(int size, long seed) {
        byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        return b;
    }
}
