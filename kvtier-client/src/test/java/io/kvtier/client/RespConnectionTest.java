package io.kvtier.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.testkit.NettyLeakCheck;
import io.kvtier.testkit.RedisServerProcess;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/** The client against a real redis-server 7: commands, binary payloads, pipelining, RESP3, errors. */
@ExtendWith(NettyLeakCheck.class)
@Timeout(20)
class RespConnectionTest {
    private static RedisServerProcess redis;
    private static ClientResources resources;
    private RespConnection connection;

    @BeforeAll
    static void startRedis() throws Exception {
        redis = RedisServerProcess.start();
        resources = ClientResources.create(2);
    }

    @AfterAll
    static void stopRedis() throws Exception {
        resources.close();
        redis.close();
    }

    @BeforeEach
    void connect() throws Exception {
        connection = connectNew();
    }

    @AfterEach
    void close() {
        connection.close();
    }

    private static RespConnection connectNew() throws Exception {
        return RespConnection.connect(resources, "127.0.0.1", redis.port(), ClientOptions.defaults())
                .get(5, TimeUnit.SECONDS);
    }

    private static Reply await(CompletableFuture<Reply> future) throws Exception {
        return future.get(10, TimeUnit.SECONDS);
    }

    private static Reply.Bulk bulk(String text) {
        return new Reply.Bulk(io.netty.buffer.Unpooled.copiedBuffer(text, StandardCharsets.UTF_8));
    }

    /** Asserts and releases: a reply holding bulks equals {@code expected} (whose bulks are released too). */
    private static void assertReply(Reply actual, Reply expected) {
        try {
            assertThat(actual).isEqualTo(expected);
        } finally {
            Reply.release(actual);
            Reply.release(expected);
        }
    }

    @Test
    void answersPingWithPong() throws Exception {
        assertThat(await(connection.send("PING"))).isEqualTo(new Reply.Simple("PONG"));
        assertThat(connection.isOpen()).isTrue();
        assertThat(connection.inFlight()).isZero();
    }

    @Test
    void setsAndGetsAOneMebibyteBinaryValueFromOneReusedByteBuf() throws Exception {
        byte[] bytes = new byte[1 << 20];
        new Random(7).nextBytes(bytes);
        ByteBuf payload = ByteBufAllocator.DEFAULT.directBuffer(bytes.length).writeBytes(bytes);

        CompletableFuture<Reply> first = connection.send("SET", "bin:1", payload.retainedDuplicate());
        CompletableFuture<Reply> second = connection.send("SET", "bin:2".getBytes(StandardCharsets.UTF_8),
                payload.retainedDuplicate());
        assertThat(await(first)).isEqualTo(new Reply.Simple("OK"));
        assertThat(await(second)).isEqualTo(new Reply.Simple("OK"));

        Reply got = await(connection.send("GET", "bin:2"));
        assertThat(got).isInstanceOf(Reply.Bulk.class);
        assertThat(((Reply.Bulk) got).bytes()).isEqualTo(bytes);
        Reply.release(got);
        assertThat(await(connection.send("STRLEN", "bin:1"))).isEqualTo(new Reply.Int(bytes.length));

        assertThat(payload.refCnt()).as("every retained duplicate was released").isEqualTo(1);
        assertThat(payload.readerIndex()).isZero();
        payload.release();
    }

    @Test
    void pipelinesTenThousandSetsWithAutoFlushOffAndOneFlush() throws Exception {
        await(connection.send("DEL", "counter"));
        connection.autoFlush(false);
        List<CompletableFuture<Reply>> replies = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            replies.add(connection.send("SET", "pipe:" + i, Integer.toString(i)));
        }
        assertThat(connection.inFlight()).isEqualTo(10_000);

        connection.flush();
        CompletableFuture.allOf(replies.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);

        assertThat(replies).allSatisfy(reply -> assertThat(reply.join()).isEqualTo(new Reply.Simple("OK")));
        assertThat(connection.inFlight()).isZero();
        connection.autoFlush(true);
        assertReply(await(connection.send("GET", "pipe:9999")), bulk("9999"));
    }

    @Test
    void decodesResp3RepliesAfterHello3() throws Exception {
        Reply hello = await(connection.send("HELLO", "3"));
        assertThat(hello).isInstanceOf(Reply.Aggregate.class);
        Reply.Aggregate map = (Reply.Aggregate) hello;
        assertThat(map.type()).isEqualTo('%');
        assertThat(map.elements()).hasSize(14);
        int proto = map.elements().indexOf(bulk("proto"));
        assertThat(map.elements().get(proto + 1)).isEqualTo(new Reply.Int(3));
        assertThat(map.elements().get(map.elements().indexOf(bulk("server")) + 1)).isEqualTo(bulk("redis"));
        Reply.release(hello);

        await(connection.send("DEL", "r3:set", "r3:zset", "r3:hash"));
        await(connection.send("SADD", "r3:set", "m"));
        await(connection.send("ZADD", "r3:zset", "1.5", "m"));
        await(connection.send("HSET", "r3:hash", "f", "v"));
        assertReply(await(connection.send("SMEMBERS", "r3:set")), new Reply.Aggregate('~', List.of(bulk("m"))));
        assertThat(await(connection.send("ZSCORE", "r3:zset", "m"))).isEqualTo(new Reply.Other(',', "1.5"));
        assertReply(await(connection.send("HGETALL", "r3:hash")),
                new Reply.Aggregate('%', List.of(bulk("f"), bulk("v"))));
        assertThat(await(connection.send("GET", "r3:missing"))).isEqualTo(new Reply.Null());
        Reply info = await(connection.send("INFO", "server"));
        assertThat(info).isInstanceOfSatisfying(Reply.Other.class, verbatim -> {
            assertThat(verbatim.type()).isEqualTo('=');
            assertThat(verbatim.text()).startsWith("txt:# Server");
        });
    }

    @Test
    void decodesResp2NullsAndEmptyArrays() throws Exception {
        assertThat(await(connection.send("GET", "r2:missing"))).isEqualTo(new Reply.Null());
        assertThat(await(connection.send("LRANGE", "r2:missing", "0", "-1")))
                .isEqualTo(new Reply.Aggregate('*', List.of()));
        assertThat(await(connection.send("BLPOP", "r2:missing", "0.01"))).isEqualTo(new Reply.Null());
        assertReply(await(connection.send("MGET", "r2:missing", "pipe:none")),
                new Reply.Aggregate('*', List.of(new Reply.Null(), new Reply.Null())));
    }

    @Test
    void completesErrorRepliesNormallyAndStaysUsable() throws Exception {
        await(connection.send("SET", "err:str", "abc"));

        assertThat(await(connection.send("NOSUCHCOMMAND", "x"))).isInstanceOfSatisfying(Reply.Error.class,
                error -> assertThat(error.message()).startsWith("ERR unknown command 'NOSUCHCOMMAND'"));
        assertThat(await(connection.send("INCR", "err:str")))
                .isEqualTo(new Reply.Error("ERR value is not an integer or out of range"));
        assertThat(await(connection.send("LPUSH", "err:str", "x"))).isEqualTo(new Reply.Error(
                "WRONGTYPE Operation against a key holding the wrong kind of value"));
        assertThat(await(connection.send("PING"))).isEqualTo(new Reply.Simple("PONG"));
    }

    @Test
    void sendsFromAReplyCallbackOnTheIoThread() throws Exception {
        Reply reply = await(connection.send("SET", "cb:key", "value")
                .thenCompose(ok -> connection.send("GET", "cb:key")));

        assertReply(reply, bulk("value"));
    }

    @Test
    void keepsRepliesInOrderWhenManyThreadsSendAtOnce() throws Exception {
        int threads = 4;
        int perThread = 500;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> senders = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                senders.add(pool.submit(() -> {
                    List<CompletableFuture<Reply>> replies = new ArrayList<>();
                    for (int i = 0; i < perThread; i++) {
                        replies.add(connection.send("ECHO", thread + ":" + i));
                    }
                    for (int i = 0; i < perThread; i++) {
                        assertReply(replies.get(i).join(), bulk(thread + ":" + i));
                    }
                    return null;
                }));
            }
            for (Future<?> sender : senders) {
                sender.get(10, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(connection.inFlight()).isZero();
    }

    @Test
    void failsEveryPendingCommandWhenTheServerKillsTheConnection() throws Exception {
        long id = ((Reply.Int) await(connection.send("CLIENT", "ID"))).value();
        CompletableFuture<Reply> blocked = connection.send("BLPOP", "kill:list", "10");
        CompletableFuture<Reply> behind1 = connection.send("PING");
        CompletableFuture<Reply> behind2 = connection.send("GET", "kill:key");

        try (RespConnection killer = connectNew()) {
            assertThat(await(killer.send("CLIENT", "KILL", "ID", Long.toString(id)))).isEqualTo(new Reply.Int(1));
        }

        for (CompletableFuture<Reply> pending : List.of(blocked, behind1, behind2)) {
            assertThatThrownBy(() -> pending.get(5, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(ConnectionClosedException.class)
                    .hasMessageContaining("closed by the server");
        }
        assertThat(connection.isOpen()).isFalse();
        assertThat(connection.inFlight()).isZero();
    }

    @Test
    void releasesAReplyWhoseFutureWasCancelled() throws Exception {
        await(connection.send("SET", "cancel:key", "x".repeat(100)));
        CompletableFuture<Reply> slow = connection.send("BLPOP", "cancel:list", "0.2");
        CompletableFuture<Reply> cancelled = connection.send("GET", "cancel:key");
        cancelled.cancel(false);

        assertThat(await(slow)).isEqualTo(new Reply.Null());
        assertThat(await(connection.send("PING"))).isEqualTo(new Reply.Simple("PONG"));
        assertThat(connection.inFlight()).isZero();
        // The cancelled GET's bulk must have been released: NettyLeakCheck fails the class otherwise.
    }

    @Test
    void timesOutOnlyAfterTheCommandTimeout() throws Exception {
        ClientOptions options = new ClientOptions(Duration.ofSeconds(2), Duration.ofMillis(300));
        try (RespConnection quick = RespConnection.connect(resources, "127.0.0.1", redis.port(), options)
                .get(5, TimeUnit.SECONDS)) {
            assertThat(await(quick.send("BLPOP", "timeout:list", "0.1"))).isEqualTo(new Reply.Null());

            CompletableFuture<Reply> tooSlow = quick.send("BLPOP", "timeout:list", "2");

            assertThatThrownBy(() -> tooSlow.get(5, TimeUnit.SECONDS)).cause()
                    .isInstanceOf(RespTimeoutException.class);
            assertThat(quick.isOpen()).isFalse();
        }
    }
}
