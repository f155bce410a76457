package io.kvtier.server.net;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.server.TestNode;
import io.kvtier.testkit.NettyLeakCheck;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ConnectionHandler} and the dispatcher behind it on an {@link EmbeddedChannel}, over a real store: the error
 * replies and closes Redis gives, authentication, the client limit and backpressure. Netty's paranoid leak detector
 * fails the class if a buffer is leaked.
 */
@ExtendWith(NettyLeakCheck.class)
public class ConnectionHandlerTest {
    @TempDir
    Path dir;
    private TestNode node;

    @BeforeEach
    void open() throws Exception {
        node = TestNode.open(dir.resolve("data"), null, 10);
    }

    @AfterEach
    void close() throws Exception {
        node.close();
    }

    private EmbeddedChannel connect(TestNode on) {
        return new EmbeddedChannel(new ConnectionHandler(on.context));
    }

    /** Feeds {@code request} to the connection and returns everything it wrote back. */
    public static String send(EmbeddedChannel ch, String request) {
        return send(ch, request.getBytes(StandardCharsets.UTF_8));
    }

    static String send(EmbeddedChannel ch, byte[] request) {
        ch.writeInbound(Unpooled.wrappedBuffer(request));
        return written(ch);
    }

    public static String written(EmbeddedChannel ch) {
        ch.runPendingTasks();
        StringBuilder out = new StringBuilder();
        for (ByteBuf b; (b = ch.readOutbound()) != null; ) {
            out.append(b.toString(StandardCharsets.UTF_8));
            b.release();
        }
        return out.toString();
    }

    public static String command(String... args) {
        StringBuilder b = new StringBuilder("*").append(args.length).append("\r\n");
        for (String a : args) {
            b.append('$').append(a.getBytes(StandardCharsets.UTF_8).length).append("\r\n").append(a).append("\r\n");
        }
        return b.toString();
    }

    @Test
    void answersInlineAndMultibulkCommandsInOrder() {
        EmbeddedChannel ch = connect(node);
        assertThat(send(ch, "PING\r\n" + command("ECHO", "hi") + command("SET", "k", "v") + command("GET", "k")))
                .isEqualTo("+PONG\r\n$2\r\nhi\r\n+OK\r\n$1\r\nv\r\n");
        ch.finishAndReleaseAll();
    }

    @Test
    void decodesACommandFedOneByteAtATime() {
        EmbeddedChannel ch = connect(node);
        StringBuilder out = new StringBuilder();
        for (byte b : command("SET", "key", "value").getBytes(StandardCharsets.US_ASCII)) {
            out.append(send(ch, new byte[] {b}));
        }
        assertThat(out.toString()).isEqualTo("+OK\r\n");
        assertThat(send(ch, command("GET", "key"))).isEqualTo("$5\r\nvalue\r\n");
        ch.finishAndReleaseAll();
    }

    @Test
    void returnsALargeValueAsItWasStored() {
        EmbeddedChannel ch = connect(node);
        char[] big = new char[300 * 1024];
        Arrays.fill(big, 'x');
        big[big.length - 1] = 'y';
        String value = new String(big);
        assertThat(send(ch, command("SET", "big", value))).isEqualTo("+OK\r\n");
        assertThat(send(ch, command("GET", "big"))).isEqualTo("$" + big.length + "\r\n" + value + "\r\n");
        assertThat(send(ch, command("GET", "absent"))).isEqualTo("$-1\r\n");
        ch.finishAndReleaseAll();
    }

    @Test
    void unknownCommandGetsRedisErrorAndTheConnectionGoesOn() {
        EmbeddedChannel ch = connect(node);
        assertThat(send(ch, command("NOSUCH", "a", "b")))
                .isEqualTo("-ERR unknown command 'NOSUCH', with args beginning with: 'a' 'b' \r\n");
        assertThat(send(ch, "PING\r\n")).isEqualTo("+PONG\r\n");
        assertThat(ch.isOpen()).isTrue();
        ch.finishAndReleaseAll();
    }

    @Test
    void unknownCommandsWithHugeNameOrArgumentsAreNamedByTheirSize() {
        EmbeddedChannel ch = connect(node);
        String huge = "x".repeat(20 * 1024);
        assertThat(send(ch, command(huge))).isEqualTo("-ERR unknown command of 20480 bytes\r\n");
        assertThat(send(ch, command("NOSUCH", huge)))
                .isEqualTo("-ERR unknown command 'NOSUCH', with args beginning with: '<20480 bytes>' \r\n");
        assertThat(send(ch, "PING\r\n")).isEqualTo("+PONG\r\n");
        ch.finishAndReleaseAll();
    }

    @Test
    void helloThreeSwitchesTheConnectionToResp3Replies() {
        EmbeddedChannel ch = connect(node);
        assertThat(send(ch, command("HELLO", "3"))).startsWith("%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n")
                .contains("$5\r\nproto\r\n:3\r\n");
        assertThat(send(ch, command("GET", "absent"))).isEqualTo("_\r\n");
        assertThat(send(ch, command("CLIENT", "INFO"))).startsWith("=").contains("txt:id=").contains(" resp=3 ");
        assertThat(send(ch, command("HELLO", "4"))).isEqualTo("-NOPROTO unsupported protocol version\r\n");
        ch.finishAndReleaseAll();
    }

    @Test
    void wrongArityAndUnknownSubcommandGetRedisErrors() {
        EmbeddedChannel ch = connect(node);
        assertThat(send(ch, command("GET"))).isEqualTo("-ERR wrong number of arguments for 'get' command\r\n");
        assertThat(send(ch, command("CLIENT"))).isEqualTo("-ERR wrong number of arguments for 'client' command\r\n");
        assertThat(send(ch, command("CLIENT", "NOPE")))
                .isEqualTo("-ERR unknown subcommand 'NOPE'. Try CLIENT HELP.\r\n");
        ch.finishAndReleaseAll();
    }

    @Test
    void protocolErrorIsAnsweredWithRedisTextAndClosesTheConnection() {
        EmbeddedChannel ch = connect(node);
        assertThat(send(ch, "*1\r\n$abc\r\nPING\r\n")).isEqualTo("-ERR Protocol error: invalid bulk length\r\n");
        assertThat(ch.isOpen()).isFalse();
        ch.finishAndReleaseAll();
    }

    @Test
    void quitAnswersOkThenCloses() {
        EmbeddedChannel ch = connect(node);
        assertThat(send(ch, command("QUIT") + "PING\r\n")).isEqualTo("+OK\r\n");
        assertThat(ch.isOpen()).isFalse();
        ch.finishAndReleaseAll();
    }

    @Test
    void withAPasswordOnlyAuthAndHelloRunBeforeAuthentication() throws Exception {
        try (TestNode guarded = TestNode.open(dir.resolve("guarded"), "s3cret", 10)) {
            EmbeddedChannel ch = connect(guarded);
            assertThat(send(ch, command("GET", "k"))).isEqualTo("-NOAUTH Authentication required.\r\n");
            assertThat(send(ch, command("AUTH", "wrong")))
                    .isEqualTo("-WRONGPASS invalid username-password pair or user is disabled.\r\n");
            assertThat(send(ch, command("AUTH", "s3cret"))).isEqualTo("+OK\r\n");
            assertThat(send(ch, command("GET", "k"))).isEqualTo("$-1\r\n");
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void aClientBeyondTheLimitGetsRedisErrorAndIsClosedWhileOthersGoOn() throws Exception {
        try (TestNode small = TestNode.open(dir.resolve("small"), null, 1)) {
            EmbeddedChannel first = connect(small);
            EmbeddedChannel second = connect(small);
            assertThat(written(second)).isEqualTo("-ERR max number of clients reached\r\n");
            assertThat(second.isOpen()).isFalse();
            assertThat(send(first, "PING\r\n")).isEqualTo("+PONG\r\n");
            first.close();
            EmbeddedChannel third = connect(small);
            assertThat(send(third, "PING\r\n")).as("the slot is free again").isEqualTo("+PONG\r\n");
            assertThat(small.context.connectionsRejected.sum()).isEqualTo(1);
            first.finishAndReleaseAll();
            second.finishAndReleaseAll();
            third.finishAndReleaseAll();
        }
    }

    @Test
    void stopsReadingWhileTheSocketCannotTakeRepliesAndResumesAfter() {
        EmbeddedChannel ch = connect(node);
        ch.unsafe().outboundBuffer().setUserDefinedWritability(1, false);
        assertThat(send(ch, "PING\r\nPING\r\n")).as("no reply while not writable").isEmpty();
        assertThat(ch.config().isAutoRead()).isFalse();
        ch.unsafe().outboundBuffer().setUserDefinedWritability(1, true);
        assertThat(written(ch)).isEqualTo("+PONG\r\n+PONG\r\n");
        assertThat(ch.config().isAutoRead()).isTrue();
        ch.finishAndReleaseAll();
    }

    @Test
    void clientNamesOverTheLimitAreRefusedAndListedNamesAreBounded() {
        EmbeddedChannel ch = connect(node);
        String tooLong = "n".repeat(1 << 20);
        assertThat(send(ch, command("CLIENT", "SETNAME", tooLong)))
                .isEqualTo("-ERR Client names longer than 256 bytes are not supported (got 1048576)\r\n");
        assertThat(send(ch, command("CLIENT", "SETINFO", "LIB-NAME", tooLong)))
                .isEqualTo("-ERR lib-name longer than 256 bytes are not supported (got 1048576)\r\n");
        String longest = "n".repeat(256);
        assertThat(send(ch, command("CLIENT", "SETNAME", longest))).isEqualTo("+OK\r\n");
        String list = send(ch, command("CLIENT", "LIST"));
        assertThat(list).contains(" name=" + longest + " ");
        ch.finishAndReleaseAll();
    }

    @Test
    void clientNoTouchIsAModeOfTheConnectionAsInRedis() {
        EmbeddedChannel ch = connect(node);
        assertThat(send(ch, command("SET", "k", "v"))).isEqualTo("+OK\r\n");
        assertThat(send(ch, command("CLIENT", "NO-TOUCH", "on"))).isEqualTo("+OK\r\n");
        assertThat(send(ch, command("CLIENT", "INFO"))).contains(" flags=T ");
        assertThat(send(ch, command("GET", "k"))).isEqualTo("$1\r\nv\r\n");
        assertThat(send(ch, command("CLIENT", "NO-TOUCH", "maybe"))).isEqualTo("-ERR syntax error\r\n");
        assertThat(send(ch, command("CLIENT", "NO-TOUCH", "OFF"))).isEqualTo("+OK\r\n");
        assertThat(send(ch, command("CLIENT", "INFO"))).contains(" flags=N ");
        ch.finishAndReleaseAll();
    }

    @Test
    void closingWithUnreadInputReleasesIt() {
        EmbeddedChannel ch = connect(node);
        ch.unsafe().outboundBuffer().setUserDefinedWritability(1, false);
        send(ch, command("SET", "k", "v") + "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$10\r\npart");
        ch.close();
        assertThat(written(ch)).isEmpty();
        ch.finishAndReleaseAll();
    }
}
