package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.testkit.RedisServerProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.AfterParameterizedClassInvocation;
import org.junit.jupiter.params.BeforeParameterizedClassInvocation;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;
import org.redisson.Redisson;
import org.redisson.api.RBucket;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;

/**
 * Redisson's RBucket against one real node, and the same tests against redis-server 7.0 (so that what they expect is
 * Redis's behaviour). Several of its operations are Lua scripts (EVAL/EVALSHA): expire, compareAndSet, getAndDelete
 * and clearExpire among them. Issue 11: RBucket.expire() used to spin until its timeout on "unknown command
 * 'EVALSHA'"; every call here must answer within a few seconds.
 */
@ParameterizedClass(name = "against {0}")
@ValueSource(strings = {"redis-server", "kvtier"})
class RedissonIT {
    private static final int TIMEOUT_SECONDS = 10;

    @TempDir
    static Path tmp;
    static AutoCloseable server;
    static RedissonClient redisson;

    @Parameter
    String target;

    @BeforeParameterizedClassInvocation
    static void startServerAndClient(String target) throws Exception {
        int port;
        if (target.equals("kvtier")) {
            KvtierProcess node = KvtierProcess.start(tmp.resolve("node"), "--memory", "64m");
            server = node;
            port = node.port();
        } else {
            RedisServerProcess redis = RedisServerProcess.start(Files.createDirectories(tmp.resolve("redis")));
            server = redis;
            port = redis.port();
        }
        Config config = new Config();
        config.setNettyThreads(2);
        config.useSingleServer().setAddress("redis://127.0.0.1:" + port).setConnectionMinimumIdleSize(1)
                .setConnectionPoolSize(2).setTimeout(5_000).setRetryAttempts(1);
        redisson = Redisson.create(config);
    }

    @AfterParameterizedClassInvocation
    static void stop() throws Exception {
        if (redisson != null) {
            redisson.shutdown();
            redisson = null;
        }
        if (server != null) {
            server.close();
            server = null;
        }
    }

    private static <T> T await(org.redisson.api.RFuture<T> f) throws Exception {
        return f.toCompletableFuture().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    }

    @Test
    void setGetAndExpireAnswerPromptly() throws Exception {
        RBucket<String> b = redisson.getBucket("redisson:expire", StringCodec.INSTANCE);
        await(b.setAsync("v1"));
        assertThat(await(b.getAsync())).isEqualTo("v1");
        assertThat(await(b.expireAsync(Duration.ofSeconds(100)))).isTrue();
        assertThat(await(b.remainTimeToLiveAsync())).isBetween(90_000L, 100_000L);
        assertThat(await(b.clearExpireAsync())).isTrue();
        assertThat(await(b.remainTimeToLiveAsync())).isEqualTo(-1L);
        assertThat(await(b.expireAsync(Duration.ofMillis(200)))).isTrue();
        Thread.sleep(400);
        assertThat(await(b.getAsync())).isNull();
        RBucket<String> missing = redisson.getBucket("redisson:missing", StringCodec.INSTANCE);
        assertThat(await(missing.expireAsync(Duration.ofSeconds(100)))).isFalse();
    }

    @Test
    void compareAndSetTrySetAndGetAndDelete() throws Exception {
        RBucket<String> b = redisson.getBucket("redisson:cas", StringCodec.INSTANCE);
        assertThat(await(b.compareAndSetAsync(null, "first"))).isTrue();
        assertThat(await(b.compareAndSetAsync(null, "again"))).isFalse();
        assertThat(await(b.compareAndSetAsync("first", "second"))).isTrue();
        assertThat(await(b.compareAndSetAsync("first", "third"))).isFalse();
        assertThat(await(b.getAsync())).isEqualTo("second");
        assertThat(await(b.compareAndSetAsync("second", null))).isTrue();
        assertThat(await(b.isExistsAsync())).isFalse();

        assertThat(await(b.setIfAbsentAsync("t1"))).isTrue();
        assertThat(await(b.setIfAbsentAsync("t2"))).isFalse();
        assertThat(await(b.getAndDeleteAsync())).isEqualTo("t1");
        assertThat(await(b.getAndDeleteAsync())).isNull();
        assertThat(await(b.isExistsAsync())).isFalse();
    }

    @Test
    void scriptsLoadedEvaluatedBySha1AndFlushed() throws Exception {
        RScript script = redisson.getScript(StringCodec.INSTANCE);
        String body = "redis.call('set', KEYS[1], ARGV[1]); return redis.call('get', KEYS[1])";
        String sha = await(script.scriptLoadAsync(body));
        assertThat(await(script.scriptExistsAsync(new String[] {sha}))).containsExactly(true);
        String value = await(script.evalShaAsync(RScript.Mode.READ_WRITE, sha, RScript.ReturnType.VALUE,
                List.of("redisson:script"), "v1"));
        assertThat(value).isEqualTo("v1");
        Long n = await(script.evalAsync(RScript.Mode.READ_ONLY, "return #KEYS + #ARGV", RScript.ReturnType.INTEGER,
                List.of("a", "b"), "c"));
        assertThat(n).isEqualTo(3L);
        await(script.scriptFlushAsync());
        assertThat(await(script.scriptExistsAsync(new String[] {sha}))).containsExactly(false);
    }

    @Test
    void expiryVariantsAndTheDefaultCodec() throws Exception {
        RBucket<String> b = redisson.getBucket("redisson:variants", StringCodec.INSTANCE);
        await(b.setAsync("a"));
        assertThat(await(b.setIfExistsAsync("b"))).isTrue();
        assertThat(await(b.getAndExpireAsync(Duration.ofSeconds(100)))).isEqualTo("b");
        assertThat(await(b.remainTimeToLiveAsync())).isBetween(90_000L, 100_000L);
        assertThat(await(b.expireIfNotSetAsync(Duration.ofSeconds(10)))).isFalse();
        assertThat(await(b.expireIfGreaterAsync(Duration.ofSeconds(1000)))).isTrue();
        await(b.setAndKeepTTLAsync("c"));
        assertThat(await(b.remainTimeToLiveAsync())).isBetween(900_000L, 1_000_000L);
        assertThat(await(b.getAndClearExpireAsync())).isEqualTo("c");
        assertThat(await(b.remainTimeToLiveAsync())).isEqualTo(-1L);
        assertThat(await(b.getAndSetAsync("d", Duration.ofSeconds(100)))).isEqualTo("c");
        assertThat(await(b.touchAsync())).isTrue();
        RBucket<Object> kryo = redisson.getBucket("redisson:kryo"); // Redisson's default codec
        await(kryo.setAsync(List.of(1, 2)));
        assertThat(await(kryo.getAsync())).isEqualTo(List.of(1, 2));
    }

    /**
     * Methods that send commands kvtier does not have (RENAME: README, client compatibility) fail at once
     * against it, with no retrying until a timeout; against Redis they work.
     */
    @Test
    void methodsNeedingMissingCommandsFailAtOnce() throws Exception {
        RBucket<String> b = redisson.getBucket("redisson:missing-commands", StringCodec.INSTANCE);
        long start = System.nanoTime();
        assertThat(await(b.getAndSetAsync("x"))).isNull(); // GETSET
        if (target.equals("redis-server")) {
            await(b.renameAsync("redisson:other"));
            return;
        }
        assertThatThrownBy(() -> await(b.renameAsync("redisson:other"))).hasMessageContaining("unknown command 'RENAME'");
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(5_000);
    }

    @Test
    void bucketWithTtlAndDelete() throws Exception {
        RBucket<String> b = redisson.getBucket("redisson:ttl", StringCodec.INSTANCE);
        await(b.setAsync("v", Duration.ofSeconds(50)));
        assertThat(await(b.remainTimeToLiveAsync())).isBetween(40_000L, 50_000L);
        assertThat(await(b.sizeAsync())).isEqualTo(1L);
        assertThat(await(b.deleteAsync())).isTrue();
        assertThat(await(b.deleteAsync())).isFalse();
    }
}
