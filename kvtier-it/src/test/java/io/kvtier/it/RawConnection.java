package io.kvtier.it;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * A plain socket to a Redis-protocol server: sends each command as a RESP multibulk and reads back exactly one raw
 * reply. No pipelining, so every reply belongs to the command just sent. Not thread-safe.
 */
final class RawConnection implements AutoCloseable {
    private static final int TIMEOUT_MILLIS = 5_000;

    private final Socket socket;
    private final RawReplyReader reader;

    RawConnection(int port) throws IOException {
        socket = new Socket();
        socket.connect(new InetSocketAddress("127.0.0.1", port), TIMEOUT_MILLIS);
        socket.setSoTimeout(TIMEOUT_MILLIS);
        socket.setTcpNoDelay(true);
        reader = new RawReplyReader(new BufferedInputStream(socket.getInputStream()));
    }

    RawReply call(List<byte[]> args) throws IOException {
        socket.getOutputStream().write(multibulk(args));
        return reader.read();
    }

    RawReply call(String... args) throws IOException {
        return call(Arrays.stream(args).map(a -> a.getBytes(StandardCharsets.UTF_8)).toList());
    }

    static byte[] multibulk(List<byte[]> args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(("*" + args.size() + "\r\n").getBytes(StandardCharsets.US_ASCII));
        for (byte[] a : args) {
            out.writeBytes(("$" + a.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
            out.writeBytes(a);
            out.writeBytes(new byte[] {'\r', '\n'});
        }
        return out.toByteArray();
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
