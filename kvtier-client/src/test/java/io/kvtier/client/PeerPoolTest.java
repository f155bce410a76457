package io.kvtier.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.testkit.NettyLeakCheck;
import io.kvtier.testkit.RedisServerProcess;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/** The pool against real redis-servers, one per test: round-robin, lazy connects, peers that die, stall and leave. */
@ExtendWith(NettyLeakCheck.class)
@Timeout(30)
class PeerPoolTest {
    private static ClientResources resources;
    private RedisServerProcess redis;
    private InetSocketAddress peer;

    @BeforeAll
    static void startThreads() {
        resources = ClientResources.create(2);
    }

    @AfterAll
    static void stopThreads() {
        resources.close();
    }

    @BeforeEach
    void startRedis() throws Exception {
        redis = RedisServerProcess.start();
        peer = new InetSocketAddress("127.0.0.1", redis.port());
    }

    @AfterEach
    void stopRedis() {
        redis.close();
    }

    @Test
    void rejectsFewerThanOneConnectionPerPeer() {
        assertThatThrownBy(() -> PeerPool.create(resources, ClientOptions.defaults(), 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("connectionsPerPeer 0 must be at least 1");
    }

    @Test
    void authenticatesEveryConnectionBeforeItsFirstCommand() throws Exception {
        try (PeerPool admin = PeerPool.create(resources, ClientOptions.defaults(), 1)) {
            assertThat(admin.send(peer, "CONFIG", "SET", "requirepass", "s3cret").get(5, TimeUnit.SECONDS))
                    .isInstanceOf(Reply.Simple.class);
        }
        try (PeerPool pool = PeerPool.create(resources, ClientOptions.defaults(), 2, "s3cret");
             PeerPool wrong = PeerPool.create(resources, ClientOptions.defaults(), 1, "guess");
             PeerPool none = PeerPool.create(resources, ClientOptions.defaults(), 1)) {
            for (int i = 0; i < 4; i++) {
                assertThat(pool.send(peer, "PING").get(5, TimeUnit.SECONDS)).isEqualTo(new Reply.Simple("PONG"));
            }
            assertThatThrownBy(() -> wrong.send(peer, "PING").get(5, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(java.io.IOException.class).hasMessageContaining("AUTH at")
                    .hasMessageContaining("WRONGPASS");
            assertThat(none.send(peer, "PING").get(5, TimeUnit.SECONDS)).isInstanceOf(Reply.Error.class);
        }
    }

    @Test
    void roundRobinsOverItsConnectionsToOnePeer() throws Exception {
        try (PeerPool pool = PeerPool.create(resources, ClientOptions.defaults(), 3)) {
            List<Long> ids = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                ids.add(clientId(pool));
            }

            assertThat(new HashSet<>(ids.subList(0, 3))).hasSize(3);
            assertThat(ids.subList(3, 6)).isEqualTo(ids.subList(0, 3));
            assertThat(clientsConnectedTo(redis)).isEqualTo(3);
        }
    }

    @Test
    void concurrentFirstSendsOpenExactlyNConnections() throws Exception {
        int threads = 8;
        int sendsPerThread = 8;
        try (PeerPool pool = PeerPool.create(resources, ClientOptions.defaults(), 4)) {
            CountDownLatch start = new CountDownLatch(1);
            List<CompletableFuture<Reply>> replies = Collections.synchronizedList(new ArrayList<>());
            List<Thread> senders = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                senders.add(Thread.ofPlatform().start(() -> {
                    awaitUninterruptibly(start);
                    for (int i = 0; i < sendsPerThread; i++) {
                        replies.add(pool.send(peer, "CLIENT", "ID"));
                    }
                }));
            }
            start.countDown();
            for (Thread sender : senders) {
                sender.join();
            }

            Set<Long> ids = new HashSet<>();
            for (CompletableFuture<Reply> reply : replies) {
                ids.add(((Reply.Int) reply.get(5, TimeUnit.SECONDS)).value());
            }
            assertThat(replies).hasSize(threads * sendsPerThread);
            assertThat(ids).hasSize(4);
            assertThat(clientsConnectedTo(redis)).isEqualTo(4);
        }
    }

    @Test
    void failsACallToAPeerThatIsNotListeningWithinTheConnectTimeout() throws Exception {
        Duration connectTimeout = Duration.ofMillis(500);
        InetSocketAddress absent = new InetSocketAddress("127.0.0.1", RedisServerProcess.freePort());
        ByteBuf payload = ByteBufAllocator.DEFAULT.buffer().writeBytes("v".getBytes(StandardCharsets.UTF_8));
        try (PeerPool pool = PeerPool.create(resources, new ClientOptions(connectTimeout, Duration.ofSeconds(5)), 2)) {
            long start = System.nanoTime();

            CompletableFuture<Reply> call = pool.send(absent, "SET", "k", payload);

            assertThat(Futures.failure(call)).isInstanceOf(ConnectException.class);
            assertThat(millisSince(start)).isLessThan(connectTimeout.toMillis());
            assertThat(payload.refCnt()).as("released although never sent").isZero();
        }
    }

    @Test
    void failsACallToAPeerThatStopsAnsweringWithinTheCommandTimeoutThenSendsOnAFreshConnection() throws Exception {
        Duration commandTimeout = Duration.ofMillis(300);
        try (PeerPool pool = PeerPool.create(resources, new ClientOptions(Duration.ofSeconds(2), commandTimeout), 1)) {
            long before = clientId(pool);
            redis.pause();
            try {
                long start = System.nanoTime();

                CompletableFuture<Reply> call = pool.send(peer, "PING");

                assertThat(Futures.failure(call)).isInstanceOf(RespTimeoutException.class);
                assertThat(millisSince(start)).isBetween(290L, 2_000L);
            } finally {
                redis.resume();
            }

            assertThat(clientId(pool)).as("a new connection's id").isNotEqualTo(before);
        }
    }

    @Test
    void reconnectsTransparentlyToAPeerKilledAndRestartedOnTheSamePort() throws Exception {
        try (PeerPool pool = PeerPool.create(resources, ClientOptions.defaults(), 2)) {
            clientId(pool);
            clientId(pool);
            redis.close();
            redis = RedisServerProcess.start(peer.getPort());

            assertThat(pool.send(peer, "PING").get(5, TimeUnit.SECONDS)).isEqualTo(new Reply.Simple("PONG"));
            assertThat(pool.send(peer, "PING").get(5, TimeUnit.SECONDS)).isEqualTo(new Reply.Simple("PONG"));
            assertThat(clientsConnectedTo(redis)).isEqualTo(2);
        }
    }

    @Test
    void evictClosesThePeersConnectionsAndFailsTheirPendingCalls() throws Exception {
        try (PeerPool pool = PeerPool.create(resources, ClientOptions.defaults(), 2)) {
            clientId(pool);
            CompletableFuture<Reply> blocked = pool.send(peer, "BLPOP", "never-pushed", "0");
            clientId(pool);

            pool.evict(peer);

            assertThat(blocked).as("failed by the time evict returns").isCompletedExceptionally();
            assertThat(Futures.failure(blocked)).isInstanceOf(ConnectionClosedException.class);
            awaitClientsConnectedTo(redis, 0);
            assertThat(pool.send(peer, "PING").get(5, TimeUnit.SECONDS)).as("a later send connects afresh")
                    .isEqualTo(new Reply.Simple("PONG"));
        }
    }

    @Test
    void closeFailsPendingCallsAndLaterSends() throws Exception {
        PeerPool pool = PeerPool.create(resources, ClientOptions.defaults(), 2);
        CompletableFuture<Reply> blocked = pool.send(peer, "BLPOP", "never-pushed", "0");
        // On the second connection, still connecting or already blocked when close() runs: pending either way (a
        // PING here could be answered before close() on a fast connect).
        CompletableFuture<Reply> second = pool.send(peer, "BLPOP", "never-pushed-either", "0");

        pool.close();

        assertThat(List.of(blocked, second)).as("failed by the time close returns")
                .allMatch(CompletableFuture::isCompletedExceptionally);
        assertThat(Futures.failure(blocked)).isInstanceOf(ConnectionClosedException.class);
        ByteBuf payload = ByteBufAllocator.DEFAULT.buffer().writeBytes("v".getBytes(StandardCharsets.UTF_8));
        assertThat(Futures.failure(pool.send(peer, "SET", "k", payload))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("PeerPool is closed");
        assertThat(payload.refCnt()).isZero();
        pool.close();
        awaitClientsConnectedTo(redis, 0);
    }

    private long clientId(PeerPool pool) throws Exception {
        return ((Reply.Int) pool.send(peer, "CLIENT", "ID").get(5, TimeUnit.SECONDS)).value();
    }

    /** Clients of {@code server} other than the one asking. */
    private static int clientsConnectedTo(RedisServerProcess server) throws Exception {
        try (RespConnection probe = RespConnection.connect(resources, "127.0.0.1", server.port(),
                ClientOptions.defaults()).get(5, TimeUnit.SECONDS)) {
            Reply list = probe.send("CLIENT", "LIST").get(5, TimeUnit.SECONDS);
            try {
                return (int) ((Reply.Bulk) list).utf8().lines().count() - 1;
            } finally {
                Reply.release(list);
            }
        }
    }

    /** The server notices closed connections on its own schedule: polls for up to 5 s. */
    private static void awaitClientsConnectedTo(RedisServerProcess server, int expected) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (clientsConnectedTo(server) != expected && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(clientsConnectedTo(server)).isEqualTo(expected);
    }

    private static long millisSince(long startNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    private static void awaitUninterruptibly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
