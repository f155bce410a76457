package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Byte-exact RESP exchanges with a password-protected node over plain sockets: every reply is compared with the bytes
 * Redis 7.0 sends, including error texts, RESP3 nulls, pipelined batches, inline commands and values that arrive in
 * fragments; a protocol error closes only the connection that caused it.
 */
class RawSocketIT {
    private static final String PASSWORD = "secret";

    @TempDir
    static Path tmp;
    static KvtierProcess node;

    @BeforeAll
    static void startNode() throws IOException {
        node = KvtierProcess.start(tmp.resolve("node"), "--memory", "64m", "--requirepass", PASSWORD);
    }

    @AfterAll
    static void stopNode() throws InterruptedException {
        if (node != null) {
            node.stop();
        }
    }

    @Test
    void repliesToStringCommandsInExactResp2Bytes() throws IOException {
        try (Conn c = Conn.authenticated()) {
            c.exchange(resp("SET", "raw:foo", "bar"), "+OK\r\n");
            c.exchange(resp("GET", "raw:foo"), "$3\r\nbar\r\n");
            c.exchange(resp("GET", "raw:missing"), "$-1\r\n");
            c.exchange(resp("EXISTS", "raw:foo"), ":1\r\n");
            c.exchange(resp("DEL", "raw:foo"), ":1\r\n");
            c.exchange(resp("EXISTS", "raw:foo"), ":0\r\n");
            c.exchange(resp("DEL", "raw:foo"), ":0\r\n");
            c.exchange(resp("PING"), "+PONG\r\n");
        }
    }

    @Test
    void hello3SwitchesNullRepliesToResp3AndHello2Back() throws IOException {
        try (Conn c = Conn.authenticated()) {
            c.send(resp("HELLO", "3"));
            c.expectHelloReply(3);
            c.exchange(resp("GET", "raw:missing"), "_\r\n");
            c.exchange(resp("SET", "raw:foo3", "bar"), "+OK\r\n");
            c.exchange(resp("GET", "raw:foo3"), "$3\r\nbar\r\n");
            c.exchange(resp("MGET", "raw:foo3", "raw:missing"), "*2\r\n$3\r\nbar\r\n_\r\n");
            c.send(resp("HELLO", "2"));
            c.expectHelloReply(2);
            c.exchange(resp("GET", "raw:missing"), "$-1\r\n");
        }
    }

    @Test
    void errorsCarryRedisExactTextsAndKeepTheConnectionOpen() throws IOException {
        try (Conn c = Conn.authenticated()) {
            c.exchange(resp("foo", "a", "b"), "-ERR unknown command 'foo', with args beginning with: 'a' 'b' \r\n");
            c.exchange(resp("GET"), "-ERR wrong number of arguments for 'get' command\r\n");
            c.exchange(resp("SET", "raw:k", "v", "NX", "XX"), "-ERR syntax error\r\n");
            c.exchange(resp("SET", "raw:k", "v", "EX", "abc"), "-ERR value is not an integer or out of range\r\n");
            c.exchange(resp("SET", "raw:k", "v", "EX", "0"), "-ERR invalid expire time in 'set' command\r\n");
            c.exchange(resp("PING"), "+PONG\r\n");
        }
    }

    @Test
    void refusesCommandsWithNoauthUntilThePasswordIsGiven() throws IOException {
        try (Conn c = Conn.open()) {
            c.exchange(resp("GET", "raw:foo"), "-NOAUTH Authentication required.\r\n");
            c.exchange(resp("SET", "raw:foo", "bar"), "-NOAUTH Authentication required.\r\n");
            c.exchange(resp("AUTH", "wrong"), "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
            c.exchange(resp("AUTH", "default", "wrong"),
                    "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
            c.exchange(resp("PING"), "-NOAUTH Authentication required.\r\n");
            c.exchange(resp("AUTH", PASSWORD), "+OK\r\n");
            c.exchange(resp("PING"), "+PONG\r\n");
        }
    }

    /** Redis 7.0.15's wording; 7.2 changed it to "HELLO &lt;proto&gt; AUTH", but kvtier reports 7.0.15. */
    @Test
    void refusesHelloBeforeAuthWithRedis70Wording() throws IOException {
        try (Conn c = Conn.open()) {
            c.exchange(resp("HELLO", "3"), "-NOAUTH HELLO must be called with the client already authenticated, "
                    + "otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and "
                    + "select the RESP protocol version at the same time\r\n");
            c.exchange(resp("PING"), "-NOAUTH Authentication required.\r\n");
        }
    }

    @Test
    void helloWithAuthAuthenticatesAndSelectsResp3() throws IOException {
        try (Conn c = Conn.open()) {
            c.send(resp("HELLO", "3", "AUTH", "default", PASSWORD, "SETNAME", "raw-it"));
            c.expectHelloReply(3);
            c.exchange(resp("CLIENT", "GETNAME"), "$6\r\nraw-it\r\n");
            c.exchange(resp("GET", "raw:missing"), "_\r\n");
        }
    }

    @Test
    void refusesLargeBulksBeforeAuthAndClosesTheConnection() throws IOException {
        try (Conn c = Conn.open()) {
            c.send("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100000\r\n");
            c.expect("-ERR Protocol error: unauthenticated bulk length\r\n");
            assertThat(c.peerClosed()).as("connection closed after the protocol error").isTrue();
        }
    }

    @Test
    void answersAThousandPipelinedCommandsSentInOneWrite() throws IOException {
        StringBuilder commands = new StringBuilder();
        StringBuilder replies = new StringBuilder();
        for (int i = 0; i < 500; i++) {
            String key = "pipe:" + i;
            String value = "value-" + i + "-" + "x".repeat(i % 50);
            commands.append(resp("SET", key, value)).append(resp("GET", key));
            replies.append("+OK\r\n").append(bulk(value));
        }
        try (Conn c = Conn.authenticated()) {
            c.send(commands.toString());
            c.expect(replies.toString());
            c.exchange(resp("EXISTS", "pipe:0", "pipe:499", "pipe:500"), ":2\r\n");
        }
    }

    @Test
    void protocolErrorClosesOnlyTheOffendingConnection() throws IOException {
        try (Conn good = Conn.authenticated(); Conn bad = Conn.authenticated()) {
            good.exchange(resp("SET", "raw:survivor", "alive"), "+OK\r\n");
            bad.send("*1\r\n$abc\r\n");
            bad.expect("-ERR Protocol error: invalid bulk length\r\n");
            assertThat(bad.peerClosed()).as("offending connection closed").isTrue();
            good.exchange(resp("GET", "raw:survivor"), "$5\r\nalive\r\n");
            good.exchange(resp("PING"), "+PONG\r\n");
        }
        try (Conn fresh = Conn.authenticated()) {
            fresh.exchange(resp("GET", "raw:survivor"), "$5\r\nalive\r\n");
        }
    }

    @Test
    void acceptsInlineCommandsWithQuotedArguments() throws IOException {
        try (Conn c = Conn.open()) {
            c.exchange("AUTH " + PASSWORD + "\r\n", "+OK\r\n");
            c.exchange("PING\r\n", "+PONG\r\n");
            c.exchange("SET a \"b c\"\r\n", "+OK\r\n");
            c.exchange("GET a\r\n", "$3\r\nb c\r\n");
            c.exchange("SET raw:hex \"\\x41\\x42\\n\"\r\n", "+OK\r\n");
            c.exchange("GET raw:hex\r\n", "$3\r\nAB\n\r\n");
            c.exchange("  EXISTS   a raw:hex  \n", ":2\r\n");
            c.send("SET a \"unbalanced\r\n");
            c.expect("-ERR Protocol error: unbalanced quotes in request\r\n");
            assertThat(c.peerClosed()).isTrue();
        }
    }

    @Test
    void storesAOneMebibyteValueSentInSmallFragments() throws IOException, InterruptedException {
        Random random = new Random(42);
        byte[] value = new byte[1 << 20];
        random.nextBytes(value);
        ByteArrayOutputStream stream = new ByteArrayOutputStream();
        stream.writeBytes(ascii("*3\r\n$3\r\nSET\r\n$8\r\nraw:big1\r\n$" + value.length + "\r\n"));
        stream.writeBytes(value);
        stream.writeBytes(ascii("\r\n" + resp("STRLEN", "raw:big1")));
        byte[] request = stream.toByteArray();
        try (Conn c = Conn.authenticated()) {
            c.sendInFragments(request, random);
            c.expect("+OK\r\n:1048576\r\n");
            c.send(resp("GET", "raw:big1"));
            c.expect("$1048576\r\n");
            c.expectBytes(value);
            c.expect("\r\n");
            c.exchange(resp("GETRANGE", "raw:big1", "1000", "1003"), bulk(value, 1000, 4));
        }
    }

    static String resp(String... args) {
        StringBuilder b = new StringBuilder("*").append(args.length).append("\r\n");
        for (String a : args) {
            b.append(bulk(a));
        }
        return b.toString();
    }

    static String bulk(String s) {
        return "$" + ascii(s).length + "\r\n" + s + "\r\n";
    }

    static String bulk(byte[] bytes, int from, int length) {
        return "$" + length + "\r\n" + new String(bytes, from, length, StandardCharsets.ISO_8859_1) + "\r\n";
    }

    static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.ISO_8859_1);
    }

    /** One client connection; every read waits at most 30 s, so a missing reply fails instead of hanging. */
    static final class Conn implements AutoCloseable {
        private final Socket socket;
        private final InputStream in;
        private final OutputStream out;

        private Conn(Socket socket) throws IOException {
            this.socket = socket;
            socket.setSoTimeout(30_000);
            socket.setTcpNoDelay(true);
            this.in = socket.getInputStream();
            this.out = socket.getOutputStream();
        }

        static Conn open() throws IOException {
            return new Conn(new Socket("127.0.0.1", node.port()));
        }

        static Conn authenticated() throws IOException {
            Conn c = open();
            c.exchange(resp("AUTH", PASSWORD), "+OK\r\n");
            return c;
        }

        void send(String request) throws IOException {
            out.write(ascii(request));
            out.flush();
        }

        /** Writes {@code request} in pieces of 1 to 4096 bytes, pausing now and then so the server reads them apart. */
        void sendInFragments(byte[] request, Random random) throws IOException, InterruptedException {
            int fragments = 0;
            for (int at = 0; at < request.length; ) {
                int n = Math.min(request.length - at, at < 64 ? 1 : 1 + random.nextInt(4096));
                out.write(request, at, n);
                out.flush();
                at += n;
                if (++fragments % 16 == 0) {
                    Thread.sleep(1);
                }
            }
        }

        void exchange(String request, String expectedReply) throws IOException {
            send(request);
            expect(expectedReply);
        }

        void expect(String expected) throws IOException {
            byte[] want = ascii(expected);
            byte[] got = in.readNBytes(want.length);
            assertThat(new String(got, StandardCharsets.ISO_8859_1)).as("reply bytes").isEqualTo(expected);
        }

        void expectBytes(byte[] expected) throws IOException {
            byte[] got = in.readNBytes(expected.length);
            int mismatch = Arrays.mismatch(got, expected);
            assertThat(mismatch).as("first differing offset of %d bytes (got %d)", expected.length, got.length)
                    .isEqualTo(-1);
        }

        /** HELLO's reply: a map in RESP3, a flat array in RESP2; only the client id varies. */
        void expectHelloReply(int protocol) throws IOException {
            expect((protocol == 3 ? "%7" : "*14") + "\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n"
                    + "$6\r\n7.0.15\r\n$5\r\nproto\r\n:" + protocol + "\r\n$2\r\nid\r\n:");
            assertThat(readLine()).matches("\\d+");
            expect("$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n");
        }

        String readLine() throws IOException {
            StringBuilder line = new StringBuilder();
            for (int b = in.read(); b != '\r'; b = in.read()) {
                assertThat(b).as("end of stream inside a line").isNotEqualTo(-1);
                line.append((char) b);
            }
            assertThat(in.read()).isEqualTo('\n');
            return line.toString();
        }

        /** Whether the server closed the connection: the next read sees end of stream, not more bytes. */
        boolean peerClosed() throws IOException {
            try {
                return in.read() == -1;
            } catch (SocketTimeoutException stillOpen) {
                return false;
            } catch (IOException reset) {
                return reset.getMessage() != null && reset.getMessage().contains("reset");
            }
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
