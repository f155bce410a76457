package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.GetExArgs;
import io.lettuce.core.KeyValue;
import io.lettuce.core.LettuceFutures;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.protocol.ProtocolVersion;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Lettuce's sync and async APIs against a real node, every scenario twice: over RESP3 (Lettuce's default, negotiated
 * with HELLO 3) and with the protocol forced to RESP2. Keys carry the protocol's name, so the runs do not meet.
 */
class LettuceIT {
    @TempDir
    static Path tmp;
    static KvtierProcess node;
    static ClientResources resources;
    static final Map<ProtocolVersion, RedisClient> clients = new EnumMap<>(ProtocolVersion.class);

    @BeforeAll
    static void startNodeAndClients() throws IOException {
        node = KvtierProcess.start(tmp.resolve("node"), "--memory", "64m");
        resources = DefaultClientResources.builder().ioThreadPoolSize(2).computationThreadPoolSize(2).build();
        for (ProtocolVersion protocol : ProtocolVersion.values()) {
            RedisClient client = RedisClient.create(resources, RedisURI.create("127.0.0.1", node.port()));
            client.setOptions(ClientOptions.builder().protocolVersion(protocol).build());
            client.setDefaultTimeout(Duration.ofSeconds(30));
            clients.put(protocol, client);
        }
    }

    @AfterAll
    static void stopClientsAndNode() throws InterruptedException {
        clients.values().forEach(RedisClient::shutdown);
        if (resources != null) {
            resources.shutdown(0, 5, TimeUnit.SECONDS);
        }
        if (node != null) {
            node.stop();
        }
    }

    @ParameterizedTest
    @EnumSource(ProtocolVersion.class)
    void negotiatesTheRequestedProtocol(ProtocolVersion protocol) {
        try (StatefulRedisConnection<byte[], byte[]> conn = connect(protocol)) {
            String info = conn.sync().clientInfo();
            assertThat(info).contains(" resp=" + (protocol == ProtocolVersion.RESP3 ? 3 : 2))
                    .contains(" lib-name=Lettuce");
        }
    }

    @ParameterizedTest
    @EnumSource(ProtocolVersion.class)
    void storesAndReturnsBinaryValues(ProtocolVersion protocol) {
        try (StatefulRedisConnection<byte[], byte[]> conn = connect(protocol)) {
            RedisCommands<byte[], byte[]> sync = conn.sync();
            for (int size : new int[] {0, 1, 1000, 1 << 20, 5 << 20}) {
                byte[] key = key(protocol, "bin:" + size);
                byte[] value = randomBytes(size, size);
                assertThat(sync.set(key, value)).isEqualTo("OK");
                byte[] back = sync.get(key);
                assertThat(back).as("GET of %d bytes", size).isNotNull().hasSize(size);
                assertThat(Arrays.mismatch(back, value)).as("first differing byte").isEqualTo(-1);
            }
            assertThat(sync.get(key(protocol, "bin:missing"))).isNull();
        }
    }

    @ParameterizedTest
    @EnumSource(ProtocolVersion.class)
    void pipelinesAThousandAsyncSetsThenGets(ProtocolVersion protocol) throws Exception {
        try (StatefulRedisConnection<byte[], byte[]> conn = connect(protocol)) {
            RedisAsyncCommands<byte[], byte[]> async = conn.async();
            Random random = new Random(7);
            List<byte[]> values = new ArrayList<>();
            conn.setAutoFlushCommands(false);
            List<RedisFuture<String>> sets = new ArrayList<>();
            for (int i = 0; i < 1000; i++) {
                byte[] value = randomBytes(1 + random.nextInt(8192), i);
                values.add(value);
                sets.add(async.set(key(protocol, "pipe:" + i), value));
            }
            conn.flushCommands();
            assertThat(LettuceFutures.awaitAll(Duration.ofSeconds(60), sets.toArray(new RedisFuture<?>[0]))).isTrue();
            for (RedisFuture<String> set : sets) {
                assertThat(set.get()).isEqualTo("OK");
            }
            List<RedisFuture<byte[]>> gets = new ArrayList<>();
            for (int i = 0; i < 1000; i++) {
                gets.add(async.get(key(protocol, "pipe:" + i)));
            }
            conn.flushCommands();
            assertThat(LettuceFutures.awaitAll(Duration.ofSeconds(60), gets.toArray(new RedisFuture<?>[0]))).isTrue();
            for (int i = 0; i < 1000; i++) {
                assertThat(Arrays.mismatch(gets.get(i).get(), values.get(i))).as("value %d", i).isEqualTo(-1);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(ProtocolVersion.class)
    void mgetReturnsValuesInKeyOrderWithMissingKeysEmpty(ProtocolVersion protocol) {
        try (StatefulRedisConnection<byte[], byte[]> conn = connect(protocol)) {
            RedisCommands<byte[], byte[]> sync = conn.sync();
            Map<byte[], byte[]> entries = new LinkedHashMap<>();
            for (int i = 0; i < 10; i++) {
                entries.put(key(protocol, "m:" + i), bytes("v" + i));
            }
            assertThat(sync.mset(entries)).isEqualTo("OK");
            List<KeyValue<byte[], byte[]>> got = sync.mget(key(protocol, "m:3"), key(protocol, "m:missing"),
                    key(protocol, "m:0"), key(protocol, "m:9"));
            assertThat(got).hasSize(4);
            assertThat(got.get(0).getValue()).isEqualTo(bytes("v3"));
            assertThat(got.get(1).hasValue()).isFalse();
            assertThat(got.get(1).getKey()).isEqualTo(key(protocol, "m:missing"));
            assertThat(got.get(2).getValue()).isEqualTo(bytes("v0"));
            assertThat(got.get(3).getValue()).isEqualTo(bytes("v9"));
        }
    }

    @ParameterizedTest
    @EnumSource(ProtocolVersion.class)
    void expireSetsALifetimeThatTtlReports(ProtocolVersion protocol) {
        try (StatefulRedisConnection<byte[], byte[]> conn = connect(protocol)) {
            RedisCommands<byte[], byte[]> sync = conn.sync();
            byte[] k = key(protocol, "ttl");
            sync.set(k, bytes("v"));
            assertThat(sync.ttl(k)).isEqualTo(-1);
            assertThat(sync.expire(k, 100)).isTrue();
            assertThat(sync.ttl(k)).isBetween(1L, 100L);
            assertThat(sync.expire(key(protocol, "ttl:missing"), 100)).isFalse();
            assertThat(sync.ttl(key(protocol, "ttl:missing"))).isEqualTo(-2);
            assertThat(sync.persist(k)).isTrue();
            assertThat(sync.ttl(k)).isEqualTo(-1);
        }
    }

    @ParameterizedTest
    @EnumSource(ProtocolVersion.class)
    void getexChangesExpiryAndGetdelRemoves(ProtocolVersion protocol) {
        try (StatefulRedisConnection<byte[], byte[]> conn = connect(protocol)) {
            RedisCommands<byte[], byte[]> sync = conn.sync();
            byte[] k = key(protocol, "getex");
            sync.set(k, bytes("value"));
            assertThat(sync.getex(k, GetExArgs.Builder.ex(100))).isEqualTo(bytes("value"));
            assertThat(sync.ttl(k)).isBetween(1L, 100L);
            assertThat(sync.getex(k, GetExArgs.Builder.persist())).isEqualTo(bytes("value"));
            assertThat(sync.ttl(k)).isEqualTo(-1);
            assertThat(sync.getex(key(protocol, "getex:missing"), GetExArgs.Builder.ex(10))).isNull();

            assertThat(sync.getdel(k)).isEqualTo(bytes("value"));
            assertThat(sync.get(k)).isNull();
            assertThat(sync.exists(k)).isZero();
            assertThat(sync.getdel(k)).isNull();
        }
    }

    @ParameterizedTest
    @EnumSource(ProtocolVersion.class)
    void setArgsApplyConditionsExpiryAndGet(ProtocolVersion protocol) {
        try (StatefulRedisConnection<byte[], byte[]> conn = connect(protocol)) {
            RedisCommands<byte[], byte[]> sync = conn.sync();
            byte[] k = key(protocol, "setargs");
            byte[] absent = key(protocol, "setargs:absent");
            assertThat(sync.set(k, bytes("v1"), SetArgs.Builder.nx())).isEqualTo("OK");
            assertThat(sync.set(k, bytes("v2"), SetArgs.Builder.nx())).as("NX on an existing key").isNull();
            assertThat(sync.get(k)).isEqualTo(bytes("v1"));
            assertThat(sync.set(absent, bytes("v"), SetArgs.Builder.xx())).as("XX on a missing key").isNull();
            assertThat(sync.exists(absent)).isZero();

            assertThat(sync.set(k, bytes("v3"), SetArgs.Builder.xx().ex(100))).isEqualTo("OK");
            assertThat(sync.ttl(k)).isBetween(1L, 100L);
            assertThat(sync.set(k, bytes("v4"), SetArgs.Builder.keepttl())).isEqualTo("OK");
            assertThat(sync.ttl(k)).as("KEEPTTL").isBetween(1L, 100L);
            assertThat(sync.set(k, bytes("v5"))).isEqualTo("OK");
            assertThat(sync.ttl(k)).as("plain SET clears the TTL").isEqualTo(-1);

            assertThat(sync.setGet(k, bytes("v6"))).isEqualTo(bytes("v5"));
            assertThat(sync.setGet(k, bytes("v7"), SetArgs.Builder.nx())).as("NX GET returns, keeps the old value")
                    .isEqualTo(bytes("v6"));
            assertThat(sync.get(k)).isEqualTo(bytes("v6"));
            assertThat(sync.setGet(absent, bytes("v"), SetArgs.Builder.xx())).isNull();
            assertThat(sync.exists(absent)).isZero();
            assertThat(sync.setGet(absent, bytes("new"))).isNull();
            assertThat(sync.get(absent)).isEqualTo(bytes("new"));
        }
    }

    @ParameterizedTest
    @EnumSource(ProtocolVersion.class)
    void dbsizeCountsKeysAndFlushallEmptiesTheStore(ProtocolVersion protocol)
            throws ExecutionException, InterruptedException {
        try (StatefulRedisConnection<byte[], byte[]> conn = connect(protocol)) {
            RedisCommands<byte[], byte[]> sync = conn.sync();
            assertThat(sync.flushall()).isEqualTo("OK");
            assertThat(sync.dbsize()).isZero();
            for (int i = 0; i < 25; i++) {
                sync.set(key(protocol, "count:" + i), randomBytes(i * 1000, i));
            }
            assertThat(conn.async().dbsize().get()).isEqualTo(25);
            assertThat(conn.async().flushall().get()).isEqualTo("OK");
            assertThat(sync.dbsize()).isZero();
            assertThat(sync.get(key(protocol, "count:3"))).isNull();
        }
    }

    private static StatefulRedisConnection<byte[], byte[]> connect(ProtocolVersion protocol) {
        return clients.get(protocol).connect(ByteArrayCodec.INSTANCE);
    }

    private static byte[] key(ProtocolVersion protocol, String name) {
        return bytes("lettuce:" + protocol + ":" + name);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] randomBytes(int size, long seed) {
        byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        return b;
    }
}
