package io.kvtier.server.net;

import static io.kvtier.server.net.ConnectionHandlerTest.command;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.server.KvtierServer;
import io.kvtier.server.TestNode;
import io.kvtier.testkit.NettyLeakCheck;
import java.io.DataInputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Clients that close while their commands wait for the disk, against an in-process server on real event loops: the
 * replies that complete after the close are dropped and released (the leak detector would say otherwise), the disk
 * reads' staging is given back, and the next client reads every value intact.
 */
@ExtendWith(NettyLeakCheck.class)
class ClosedWhileAsyncTest {
    private static final int VALUES = 12;
    private static final int VALUE_BYTES = 1 << 20;

    @TempDir
    Path dir;

    @Test
    void clientsClosingWhileTheirDiskReadsAreInFlightLeaveNothingBehind() throws Exception {
        try (KvtierServer server = KvtierServer.start(TestNode.options(dir, null, 100))) {
            try (Socket writer = connect(server)) {
                for (int i = 0; i < VALUES; i++) { // 12 MiB through 4 MiB of memory: most of it goes to disk
                    send(writer, setCommand(i));
                    assertThat(readLine(writer)).isEqualTo("+OK");
                }
            }
            assertThat(server.context().store().stats().diskEntries()).isPositive();
            StringBuilder gets = new StringBuilder();
            for (int i = 0; i < VALUES; i++) {
                gets.append(command("GET", "k" + i));
            }
            for (int round = 0; round < 30; round++) {
                try (Socket quitter = connect(server)) {
                    send(quitter, gets.toString().getBytes(StandardCharsets.US_ASCII));
                    if (round % 2 == 1) {
                        quitter.getInputStream().read(); // some close once the first reply is under way
                    }
                }
            }
            try (Socket reader = connect(server)) {
                send(reader, gets.toString().getBytes(StandardCharsets.US_ASCII));
                DataInputStream in = new DataInputStream(reader.getInputStream());
                for (int i = 0; i < VALUES; i++) {
                    assertThat(readLine(reader)).isEqualTo("$" + VALUE_BYTES);
                    byte[] value = new byte[VALUE_BYTES + 2];
                    in.readFully(value);
                    assertThat(value).as("value %d", i).startsWith(pattern(i)).endsWith(pattern(i)[VALUE_BYTES - 1],
                            (byte) '\r', (byte) '\n');
                }
            }
        }
    }

    private static Socket connect(KvtierServer server) throws Exception {
        Socket s = new Socket("127.0.0.1", server.port());
        s.setSoTimeout(30_000);
        return s;
    }

    private static byte[] pattern(int i) {
        byte[] v = new byte[VALUE_BYTES];
        Arrays.fill(v, (byte) ('a' + i));
        return v;
    }

    private static byte[] setCommand(int i) {
        byte[] head = ("*3\r\n$3\r\nSET\r\n$" + ("k" + i).length() + "\r\nk" + i + "\r\n$" + VALUE_BYTES + "\r\n")
                .getBytes(StandardCharsets.US_ASCII);
        byte[] out = Arrays.copyOf(head, head.length + VALUE_BYTES + 2);
        System.arraycopy(pattern(i), 0, out, head.length, VALUE_BYTES);
        out[out.length - 2] = '\r';
        out[out.length - 1] = '\n';
        return out;
    }

    private static void send(Socket s, byte[] bytes) throws Exception {
        OutputStream out = s.getOutputStream();
        out.write(bytes);
        out.flush();
    }

    /** One reply line without its CRLF, read byte by byte (the socket's stream is shared with the caller). */
    private static String readLine(Socket s) throws Exception {
        StringBuilder line = new StringBuilder();
        for (int b; (b = s.getInputStream().read()) != '\n'; ) {
            if (b < 0) {
                throw new AssertionError("closed after " + line);
            }
            if (b != '\r') {
                line.append((char) b);
            }
        }
        return line.toString();
    }
}
