package io.kvtier.testkit;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A throwaway redis-server (7.x, from the PATH) on a local port, without persistence, for tests that run a client
 * against the real thing or compare kvtier with it side by side; {@link #close} kills it.
 */
public final class RedisServerProcess implements AutoCloseable {
    private static final long START_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final Process process;
    private final int port;

    private RedisServerProcess(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    /** Starts redis-server on a free port and waits until it accepts connections; its output is discarded. */
    public static RedisServerProcess start() throws IOException, InterruptedException {
        return start(freePort());
    }

    /** Starts redis-server on {@code port} (e.g. again after {@link #close}) and waits until it accepts connections. */
    public static RedisServerProcess start(int port) throws IOException, InterruptedException {
        return start(port, null, List.of());
    }

    /**
     * Starts redis-server on a free port with its files (and its log, {@code redis.log}) in {@code dir} and the
     * {@code extra} flags after the defaults, and waits until it accepts connections.
     */
    public static RedisServerProcess start(Path dir, String... extra) throws IOException, InterruptedException {
        return start(freePort(), dir, List.of(extra));
    }

    private static RedisServerProcess start(int port, Path dir, List<String> extra)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("redis-server", "--port", Integer.toString(port), "--bind",
                "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no"));
        if (dir != null) {
            command.addAll(List.of("--dir", dir.toString()));
        }
        command.addAll(extra);
        Process process;
        try {
            process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(dir == null ? ProcessBuilder.Redirect.DISCARD
                            : ProcessBuilder.Redirect.to(dir.resolve("redis.log").toFile()))
                    .start();
        } catch (IOException e) {
            throw new IOException("these tests need redis-server (7.x) on the PATH: " + e.getMessage(), e);
        }
        RedisServerProcess server = new RedisServerProcess(process, port);
        try {
            server.awaitListening();
        } catch (IOException | RuntimeException | InterruptedException e) {
            server.close();
            throw e;
        }
        return server;
    }

    public int port() {
        return port;
    }

    /** Stops the server with SIGSTOP: it keeps its sockets but answers nothing until {@link #resume}. */
    public void pause() throws IOException, InterruptedException {
        signal("-STOP");
    }

    /** Continues a {@link #pause}d server with SIGCONT. */
    public void resume() throws IOException, InterruptedException {
        signal("-CONT");
    }

    private void signal(String signal) throws IOException, InterruptedException {
        int exit = new ProcessBuilder("kill", signal, Long.toString(process.pid())).inheritIO().start().waitFor();
        if (exit != 0) {
            throw new IOException("kill " + signal + " " + process.pid() + " exited with " + exit);
        }
    }

    /** A port nothing listens on now, below the ephemeral range: {@link LocalPorts#free}. */
    public static int freePort() throws IOException {
        return LocalPorts.free();
    }

    private void awaitListening() throws IOException, InterruptedException {
        long deadline = System.nanoTime() + START_TIMEOUT_NANOS;
        while (true) {
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress("127.0.0.1", port), 100);
                return;
            } catch (IOException e) {
                if (!process.isAlive()) {
                    throw new IOException("redis-server on port " + port + " exited with " + process.exitValue());
                }
                if (System.nanoTime() > deadline) {
                    throw new IOException("redis-server on port " + port + " did not listen within 10 s", e);
                }
                Thread.sleep(10);
            }
        }
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
