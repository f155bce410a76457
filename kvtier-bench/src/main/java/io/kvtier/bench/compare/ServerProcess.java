package io.kvtier.bench.compare;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A server process started for a benchmark, listening on a loopback port, its output in a log file. Owns the
 * process: {@link #close} ends it and its descendants (SIGTERM, then SIGKILL after 5 s), {@link #kill} at once
 * (SIGKILL: no graceful shutdown, no flush). Not thread-safe, except that {@link #close} and {@link #kill} may also
 * run from a shutdown hook or another thread.
 */
public final class ServerProcess implements AutoCloseable {
    private static final Duration STOP_GRACE = Duration.ofSeconds(5);

    private final String name;
    private final int port;
    private final Process process;
    private final Path log;

    private ServerProcess(String name, int port, Process process, Path log) {
        this.name = name;
        this.port = port;
        this.process = process;
        this.log = log;
    }

    /** Starts {@code command} and waits until it answers PING; on failure the process is ended and the log quoted. */
    public static ServerProcess start(String name, List<String> command, int port, Path log, Duration startTimeout)
            throws IOException, InterruptedException {
        Process process;
        try {
            process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        } catch (IOException e) {
            throw new IOException(name + " could not be started (" + e.getMessage() + "); is "
                    + command.getFirst() + " installed and executable?", e);
        }
        ServerProcess server = new ServerProcess(name, port, process, log);
        try {
            server.awaitPing(startTimeout);
            return server;
        } catch (IOException | InterruptedException | RuntimeException e) {
            server.close();
            throw e;
        }
    }

    private void awaitPing(Duration timeout) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            if (!process.isAlive()) {
                throw new IOException(name + " exited with status " + process.exitValue() + " before answering PING"
                        + " on port " + port + "; its output:\n" + tail());
            }
            if (answers("PING", "+PONG")) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IOException(name + " did not answer PING on port " + port + " within "
                        + timeout.toSeconds() + "s; its output:\n" + tail());
            }
            Thread.sleep(100);
        }
    }

    /** Empties the server; throws when it does not answer OK. */
    public void flushAll() throws IOException {
        String reply = command("FLUSHALL");
        if (!reply.equals("+OK")) {
            throw new IOException(name + " answered FLUSHALL with " + reply);
        }
    }

    private boolean answers(String command, String expected) {
        try {
            return command(command).equals(expected);
        } catch (IOException e) {
            return false;
        }
    }

    /** Sends a one-word command as a RESP array and returns the first line of the reply. */
    private String command(String command) throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(120_000);
            OutputStream out = s.getOutputStream();
            String resp = "*1\r\n$" + command.length() + "\r\n" + command + "\r\n";
            out.write(resp.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            StringBuilder line = new StringBuilder();
            for (int b = in.read(); b != -1 && b != '\n'; b = in.read()) {
                if (b != '\r') {
                    line.append((char) b);
                }
            }
            return line.toString();
        }
    }

    private String tail() {
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
        } catch (IOException e) {
            return "(log " + log + " unreadable: " + e.getMessage() + ")";
        }
    }

    public String name() {
        return name;
    }

    public int port() {
        return port;
    }

    /**
     * A port free at the time of asking, with the port 100 above it (a cluster node's failure detection takes that
     * one); the server binds it shortly after, and a race is reported as a failed start.
     */
    public static synchronized int freePort() throws IOException {
        // Below the kernel's ephemeral range (32768 and up on Linux by default): ports are picked before the servers
        // start (a cluster's seeds name them), and a port the kernel handed out (port 0) can meanwhile become the
        // local end of an outgoing connection: a node of ClusterBenchIT once failed to bind its port that way.
        java.util.concurrent.ThreadLocalRandom random = java.util.concurrent.ThreadLocalRandom.current();
        for (int attempt = 0; attempt < 1000; attempt++) {
            int port = random.nextInt(rangeLow, rangeHigh - 100);
            if (!RECENT_PORTS.contains(port) && !RECENT_PORTS.contains(port + 100) && bindable(port)
                    && bindable(port + 100)) {
                RECENT_PORTS.addLast(port);
                RECENT_PORTS.addLast(port + 100);
                while (RECENT_PORTS.size() > 256) {
                    RECENT_PORTS.removeFirst();
                }
                return port;
            }
        }
        throw new IOException("no free port in " + rangeLow + ".." + (rangeHigh - 1) + " after 1000 tries");
    }

    private static int rangeLow = 20_000;
    private static int rangeHigh = 32_100; // exclusive

    /**
     * Makes {@link #freePort} (and so every process a benchmark starts) pick ports in {@code low..high} (inclusive;
     * at least 300 ports, since a port's neighbour 100 above is taken too): --port-range, for machines whose
     * firewall or other services leave only a range.
     */
    public static synchronized void usePortRange(int low, int high) {
        if (low < 1024 || high > 65535 || high - low < 299) {
            throw new IllegalArgumentException("--port-range " + low + "-" + high + ": needs at least 300 ports within "
                    + "1024..65535");
        }
        rangeLow = low;
        rangeHigh = high + 1;
    }

    /** Parses {@code LOW-HIGH} for {@link #usePortRange}. */
    public static void usePortRange(String range) {
        String[] parts = range.trim().split("-");
        try {
            if (parts.length != 2) {
                throw new NumberFormatException(range);
            }
            usePortRange(Integer.parseInt(parts[0].trim()), Integer.parseInt(parts[1].trim()));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--port-range " + range + ": give LOW-HIGH, e.g. 40000-41000");
        }
    }

    /** A free port whose next port is free too (a node's --kv-events binds both), from the same range. */
    public static synchronized int freePair() throws IOException {
        for (int attempt = 0; attempt < 1000; attempt++) {
            int p = freePort();
            if (!RECENT_PORTS.contains(p + 1) && bindable(p + 1)) {
                RECENT_PORTS.addLast(p + 1);
                return p;
            }
        }
        throw new IOException("no two consecutive free ports in " + rangeLow + ".." + (rangeHigh - 1));
    }

    /** Ports handed out last: two picks in a row never give the same one, even before either is bound. */
    private static final java.util.ArrayDeque<Integer> RECENT_PORTS = new java.util.ArrayDeque<>();

    private static boolean bindable(int port) {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new java.net.InetSocketAddress("127.0.0.1", port));
            return true;
        } catch (IOException taken) {
            return false;
        }
    }

    public Path log() {
        return log;
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** kill -9 of the process and its descendants; waits until it is gone (up to 5 s). Idempotent. */
    public void kill() {
        List<ProcessHandle> children = process.descendants().toList();
        process.destroyForcibly();
        children.forEach(ProcessHandle::destroyForcibly);
        try {
            process.waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        List<ProcessHandle> children = process.descendants().toList();
        process.destroy();
        children.forEach(ProcessHandle::destroy);
        try {
            if (!process.waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                process.waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        children.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
    }
}
