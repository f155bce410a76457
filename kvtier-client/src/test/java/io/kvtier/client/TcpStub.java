package io.kvtier.client;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** A scripted TCP server on a free local port that misbehaves on purpose: each accepted socket runs the script. */
final class TcpStub implements AutoCloseable {
    /** What the server does with one accepted connection, on its own thread. */
    @FunctionalInterface
    interface Script {
        void run(Socket socket) throws IOException, InterruptedException;
    }

    private final ServerSocket server;
    private final List<Socket> accepted = new CopyOnWriteArrayList<>();

    TcpStub(Script script) throws IOException {
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().name("tcp-stub-accept").start(() -> acceptLoop(script));
    }

    /** Reads and discards everything, never answering. */
    static Script silent() {
        return socket -> readAtLeast(socket.getInputStream(), Long.MAX_VALUE);
    }

    /** Reads {@code bytes} bytes, then closes the connection. */
    static Script closesAfterReading(int bytes) {
        return socket -> {
            readAtLeast(socket.getInputStream(), bytes);
            socket.close();
        };
    }

    /** Waits for the first byte, writes {@code reply}, then reads and discards everything. */
    static Script answers(byte[] reply) {
        return socket -> {
            InputStream in = socket.getInputStream();
            readAtLeast(in, 1);
            socket.getOutputStream().write(reply);
            socket.getOutputStream().flush();
            readAtLeast(in, Long.MAX_VALUE);
        };
    }

    int port() {
        return server.getLocalPort();
    }

    private void acceptLoop(Script script) {
        while (!server.isClosed()) {
            try {
                Socket socket = server.accept();
                accepted.add(socket);
                Thread.ofVirtual().name("tcp-stub-conn").start(() -> {
                    try (socket) {
                        script.run(socket);
                    } catch (IOException | InterruptedException e) {
                        // The client went away or the stub was closed: the script is over.
                    }
                });
            } catch (IOException e) {
                return;
            }
        }
    }

    static void readAtLeast(InputStream in, long bytes) throws IOException {
        byte[] buffer = new byte[8192];
        for (long read = 0; read < bytes; ) {
            int n = in.read(buffer, 0, (int) Math.min(buffer.length, bytes - read));
            if (n < 0) {
                return;
            }
            read += n;
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Socket socket : accepted) {
            socket.close();
        }
    }
}
