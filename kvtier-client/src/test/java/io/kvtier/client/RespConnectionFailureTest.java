package io.kvtier.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.resp.RespReplyException;
import io.kvtier.testkit.NettyLeakCheck;
import io.kvtier.testkit.RedisServerProcess;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ConnectTimeoutException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/** The client against servers that fail: silent, closing, garbling, absent, unreachable. */
@ExtendWith(NettyLeakCheck.class)
@Timeout(20)
class RespConnectionFailureTest {
    private static final int PING_BYTES = "*1\r\n$4\r\nPING\r\n".length();
    private static ClientResources resources;

    @BeforeAll
    static void startThreads() {
        resources = ClientResources.create(1);
    }

    @AfterAll
    static void stopThreads() {
        resources.close();
    }

    private static RespConnection connect(int port, ClientOptions options) throws Exception {
        return RespConnection.connect(resources, "127.0.0.1", port, options).get(5, TimeUnit.SECONDS);
    }

    @Test
    void timesOutACommandThatGetsNoReplyAndClosesTheConnection() throws Exception {
        Duration timeout = Duration.ofMillis(300);
        try (TcpStub silent = new TcpStub(TcpStub.silent());
                RespConnection connection = connect(silent.port(), new ClientOptions(Duration.ofSeconds(2), timeout))) {
            long start = System.nanoTime();
            CompletableFuture<Reply> first = connection.send("PING");
            CompletableFuture<Reply> second = connection.send("PING");

            assertThatThrownBy(() -> first.get(5, TimeUnit.SECONDS)).cause()
                    .isInstanceOf(RespTimeoutException.class).hasMessageContaining("within PT0.3S");
            long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

            assertThat(elapsedMillis).isBetween(290L, 2_000L);
            assertThat(Futures.failure(second)).isInstanceOf(ConnectionClosedException.class)
                    .hasCauseInstanceOf(RespTimeoutException.class);
            assertThat(connection.isOpen()).isFalse();
            assertThat(connection.inFlight()).isZero();
        }
    }

    @Test
    void failsEveryPendingCommandWhenTheServerClosesTheConnection() throws Exception {
        try (TcpStub closing = new TcpStub(TcpStub.closesAfterReading(3 * PING_BYTES));
                RespConnection connection = connect(closing.port(), ClientOptions.defaults())) {
            connection.autoFlush(false);
            List<CompletableFuture<Reply>> pending = List.of(connection.send("PING"), connection.send("PING"),
                    connection.send("PING"));
            connection.flush();

            CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).exceptionally(e -> null)
                    .get(5, TimeUnit.SECONDS);

            assertThat(pending).allSatisfy(future -> assertThat(Futures.failure(future))
                    .isInstanceOf(ConnectionClosedException.class).hasMessageContaining("closed by the server"));
            assertThat(connection.isOpen()).isFalse();
        }
    }

    @Test
    void failsEveryPendingCommandWhenTheClientCloses() throws Exception {
        try (TcpStub silent = new TcpStub(TcpStub.silent())) {
            RespConnection connection = connect(silent.port(), ClientOptions.defaults());
            List<CompletableFuture<Reply>> pending = List.of(connection.send("PING"), connection.send("GET", "k"));

            connection.close();

            assertThat(pending).as("failed by the time close() returns")
                    .allMatch(CompletableFuture::isCompletedExceptionally);
            assertThat(pending).allSatisfy(future -> assertThat(Futures.failure(future))
                    .isInstanceOf(ConnectionClosedException.class).hasMessageContaining("closed by the client"));
            assertThat(connection.isOpen()).isFalse();
            assertThat(connection.inFlight()).isZero();
            connection.close();
        }
    }

    @Test
    void failsCommandsSentAfterCloseAndReleasesTheirByteBufs() throws Exception {
        try (TcpStub silent = new TcpStub(TcpStub.silent())) {
            RespConnection connection = connect(silent.port(), ClientOptions.defaults());
            connection.close();
            ByteBuf payload = ByteBufAllocator.DEFAULT.directBuffer(64 << 10).writeZero(64 << 10);

            CompletableFuture<Reply> late = connection.send("SET", "k", payload);

            assertThatThrownBy(() -> late.get(5, TimeUnit.SECONDS)).cause()
                    .isInstanceOf(ConnectionClosedException.class);
            assertThat(payload.refCnt()).isZero();
            assertThat(connection.inFlight()).isZero();
        }
    }

    @Test
    void closesTheConnectionWhenTheServerSendsAnUndecodableReply() throws Exception {
        byte[] garbage = "+OK\r\n?what\r\n".getBytes(StandardCharsets.US_ASCII);
        try (TcpStub garbling = new TcpStub(TcpStub.answers(garbage));
                RespConnection connection = connect(garbling.port(), ClientOptions.defaults())) {
            CompletableFuture<Reply> first = connection.send("PING");
            CompletableFuture<Reply> second = connection.send("PING");

            assertThat(first.get(5, TimeUnit.SECONDS)).isEqualTo(new Reply.Simple("OK"));
            assertThatThrownBy(() -> second.get(5, TimeUnit.SECONDS)).cause()
                    .isInstanceOf(ConnectionClosedException.class)
                    .hasCauseInstanceOf(RespReplyException.class);
            assertThat(connection.isOpen()).isFalse();
        }
    }

    @Test
    void closesTheConnectionWhenAReplyArrivesThatNoCommandWaitedFor() throws Exception {
        byte[] unasked = "+OK\r\n+UNASKED\r\n".getBytes(StandardCharsets.US_ASCII);
        try (TcpStub chatty = new TcpStub(TcpStub.answers(unasked));
                RespConnection connection = connect(chatty.port(), ClientOptions.defaults())) {
            assertThat(connection.send("PING").get(5, TimeUnit.SECONDS)).isEqualTo(new Reply.Simple("OK"));

            for (long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5); connection.isOpen()
                    && System.nanoTime() < deadline; ) {
                Thread.sleep(10);
            }
            assertThat(connection.isOpen()).isFalse();
        }
    }

    @Test
    void failsFastToConnectToAClosedPort() throws Exception {
        int port = RedisServerProcess.freePort();
        long start = System.nanoTime();

        CompletableFuture<RespConnection> connecting = RespConnection.connect(resources, "127.0.0.1", port,
                ClientOptions.defaults());

        assertThatThrownBy(() -> connecting.get(5, TimeUnit.SECONDS)).cause().isInstanceOf(ConnectException.class);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(1_000);
    }

    @Test
    void givesUpConnectingAfterTheConnectTimeoutWhenTheServerNeverAccepts() throws Exception {
        ClientOptions options = new ClientOptions(Duration.ofMillis(200), Duration.ofSeconds(1));
        // A listener whose accept queue is full drops further SYNs, so a connect hangs as if the host were unroutable
        // (a real unroutable address is no good in sandboxes that proxy every outbound connection).
        try (ServerSocket full = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            List<SocketChannel> queued = new ArrayList<>();
            try {
                for (int i = 0; i < 4; i++) {
                    SocketChannel channel = SocketChannel.open();
                    channel.configureBlocking(false);
                    channel.connect(full.getLocalSocketAddress());
                    queued.add(channel);
                }
                long start = System.nanoTime();

                CompletableFuture<RespConnection> connecting = RespConnection.connect(resources, "127.0.0.1",
                        full.getLocalPort(), options);

                assertThatThrownBy(() -> connecting.get(5, TimeUnit.SECONDS)).cause()
                        .isInstanceOf(ConnectTimeoutException.class);
                assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(190L, 1_500L);
            } finally {
                for (SocketChannel channel : queued) {
                    channel.close();
                }
            }
        }
    }
}
