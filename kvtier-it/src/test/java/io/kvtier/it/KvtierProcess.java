package io.kvtier.it;

import io.kvtier.testkit.LocalPorts;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real kvtier node started through the repository's {@code ./kvtier server} launcher, on a free port with its
 * own data directory, logging to a file. {@link #stop()} sends SIGTERM and waits; {@link #kill()} is kill -9. Both
 * reach the JVM itself: a wrapper such as {@code faketime} forks it and stays its parent, and signals to the wrapper
 * are not passed on.
 */
public final class KvtierProcess implements AutoCloseable {
    public static final Path ROOT = Path.of(System.getProperty("kvtier.root", "..")).toAbsolutePath().normalize();

    private final Path dir;
    private final List<String> extraArgs;
    private final Path log;
    /** Where the node is reached, and what runs the launcher (e.g. {@code ip netns exec NS}); empty for as it is. */
    private final String host;
    private final List<String> prefix;
    /** What runs the launcher inside {@link #prefix} for this run only (e.g. {@code faketime -f SPEC}); often empty. */
    private List<String> wrapper = List.of();
    private int port;
    private Process process;
    private boolean launcherSizesHeap; // else the heap is -Xmx512m unless the test's KVTIER_HEAP says otherwise
    private Duration startTimeout = Duration.ofSeconds(60);
    private String heap; // the launcher's KVTIER_HEAP; null: the tests' 512 MiB
    private boolean tlsOnly; // --port 0 and the port is --tls-port: up once it logs that it listens

    private KvtierProcess(Path dir, List<String> extraArgs) {
        this(dir, extraArgs, "127.0.0.1", List.of());
    }

    private KvtierProcess(Path dir, List<String> extraArgs, String host, List<String> prefix) {
        this.dir = dir;
        this.extraArgs = extraArgs;
        this.log = dir.resolveSibling(dir.getFileName() + ".log");
        this.host = host;
        this.prefix = prefix;
    }

    /** Starts a node with data in {@code dir} and the given extra flags (e.g. "--memory", "64m"). */
    public static KvtierProcess start(Path dir, String... flags) throws IOException {
        KvtierProcess p = new KvtierProcess(dir, List.of(flags));
        p.launch(freePort());
        return p;
    }

    /** Starts a node whose JVM heap is {@code heap} (e.g. "-Xmx32m") instead of the tests' 512 MiB. */
    public static KvtierProcess startWithHeap(String heap, Path dir, String... flags) throws IOException {
        KvtierProcess p = new KvtierProcess(dir, List.of(flags));
        p.heap = heap;
        p.launch(freePort());
        return p;
    }

    /**
     * Like {@link #start}, but with the heap the launcher computes from the flags (no KVTIER_HEAP), waiting up to
     * {@code startTimeout} for the node to answer (recovering millions of keys takes a while).
     */
    public static KvtierProcess startWithLauncherHeap(Duration startTimeout, Path dir, String... flags)
            throws IOException {
        KvtierProcess p = new KvtierProcess(dir, List.of(flags));
        p.launcherSizesHeap = true;
        p.startTimeout = startTimeout;
        p.launch(freePort());
        return p;
    }

    /**
     * Starts a node reached at {@code host}:{@code port}, its launcher run by {@code prefix} (a network namespace's
     * {@code ip netns exec NS}); the flags must make it listen on {@code host}.
     */
    public static KvtierProcess startAt(String host, int port, List<String> prefix, Path dir, String... flags)
            throws IOException {
        KvtierProcess p = new KvtierProcess(dir, List.of(flags), host, prefix);
        p.launch(port);
        return p;
    }

    /**
     * Starts a node without a plain port ({@code --port 0}) and TLS on a free port, which {@link #port()} returns;
     * the flags must name the certificate files. It is taken as up once it logs that it listens (a plain PING cannot
     * reach it).
     */
    public static KvtierProcess startTlsOnly(Path dir, String... flags) throws IOException {
        KvtierProcess p = new KvtierProcess(dir, List.of(flags));
        p.tlsOnly = true;
        p.launch(freePort());
        return p;
    }

    /** Sends {@code signal} (e.g. "STOP", "CONT") to the node's JVM. */
    public void signal(String signal) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(javaPid())).inheritIO().start();
        if (kill.waitFor() != 0) {
            throw new IOException("kill -" + signal + " " + javaPid() + " failed");
        }
    }

    /** The JVM's pid: the launcher script may have exec'd it (same pid) or be its parent. */
    long javaPid() {
        return process.descendants().filter(h -> h.info().command().map(c -> c.endsWith("java")).orElse(false))
                .map(ProcessHandle::pid).findFirst().orElse(process.pid());
    }

    static int freePortForTests() throws IOException {
        return freePort();
    }

    /**
     * Starts the node again on the same port and data directory (after {@link #stop} or {@link #kill}), as it first
     * started (no wrapper).
     */
    public void restart() throws IOException {
        restartUnder(List.of());
    }

    /**
     * Like {@link #restart}, but returns once the process answers at all, {@code -LOADING} included: a cluster node
     * cut off from its peers answers -LOADING until it has joined, which it cannot while it is cut off.
     */
    public void restartUnjoined() throws IOException {
        this.wrapper = List.of();
        launch(port, true);
    }

    /**
     * Like {@link #restart}, the launcher run by {@code wrapper} (after the prefix, e.g. {@code ip netns exec NS
     * faketime -f +90s ./kvtier ...}) for this run only.
     */
    public void restartUnder(List<String> wrapper) throws IOException {
        this.wrapper = List.copyOf(wrapper);
        launch(port);
    }

    private void launch(int onPort) throws IOException {
        launch(onPort, false);
    }

    private void launch(int onPort, boolean loadingIsUp) throws IOException {
        this.port = onPort;
        List<String> cmd = new ArrayList<>(prefix);
        cmd.addAll(wrapper);
        cmd.addAll(List.of(ROOT.resolve("kvtier").toString(), "server", "--port", tlsOnly ? "0"
                : Integer.toString(port), "--dir", dir.toString()));
        if (tlsOnly) {
            cmd.addAll(List.of("--tls-port", Integer.toString(port)));
        }
        cmd.addAll(extraArgs);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        if (launcherSizesHeap) {
            pb.environment().remove("KVTIER_HEAP");
        } else if (heap != null) {
            pb.environment().put("KVTIER_HEAP", heap);
        } else {
            pb.environment().putIfAbsent("KVTIER_HEAP", "-Xmx512m");
        }
        // The launcher turns Netty's leak detector off for speed; the tests' nodes keep its default sampling on.
        String javaOpts = pb.environment().getOrDefault("KVTIER_JAVA_OPTS", "");
        if (!javaOpts.contains("io.netty.leakDetection.level")) {
            pb.environment().put("KVTIER_JAVA_OPTS", (javaOpts + " -Dio.netty.leakDetection.level=simple").strip());
        }
        int logged = logText().length(); // the log is appended to across restarts
        process = pb.start();
        try {
            awaitPing(startTimeout, logged, loadingIsUp);
        } catch (IOException notUp) {
            process.destroyForcibly(); // a node that never answered is not left running
            throw notUp;
        }
    }

    private void awaitPing(Duration timeout, int logged, boolean loadingIsUp) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IOException("kvtier exited with " + process.exitValue() + ":\n" + logText());
            }
            if (tlsOnly) {
                if (logText().indexOf("kvtier listening on", logged) >= 0) {
                    return;
                }
                sleep(100);
                continue;
            }
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(host, port), 200);
                s.setSoTimeout(2000);
                s.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
                byte[] buf = new byte[7];
                int n = s.getInputStream().readNBytes(buf, 0, 7);
                String reply = new String(buf, 0, n, StandardCharsets.US_ASCII);
                if (reply.equals("+PONG\r\n") || reply.equals("-NOAUTH") // a --requirepass node is up, too
                        || loadingIsUp && reply.equals("-LOADIN")) {
                    return;
                }
            } catch (IOException notYet) {
                // still starting
            }
            sleep(100);
        }
        throw new IOException("kvtier did not answer PING on port " + port + " within " + timeout + ":\n"
                + logText());
    }

    public int port() {
        return port;
    }

    /** The node's --requirepass, or null. */
    public String password() {
        int i = extraArgs.indexOf("--requirepass");
        return i >= 0 && i + 1 < extraArgs.size() ? extraArgs.get(i + 1) : null;
    }

    /** A plain Jedis connection to the node, authenticated if it has a password. */
    public redis.clients.jedis.Jedis jedis(int timeoutMillis) {
        redis.clients.jedis.Jedis j = new redis.clients.jedis.Jedis(host, port, timeoutMillis);
        if (password() != null) {
            j.auth(password());
        }
        return j;
    }

    /** The address the node listens on (127.0.0.1 unless started with {@link #startAt}). */
    public String host() {
        return host;
    }

    public Path dir() {
        return dir;
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process != null && process.isAlive();
    }

    /** Everything the node logged so far (across restarts). */
    public String logText() {
        try {
            return Files.exists(log) ? Files.readString(log) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Anonymous resident memory of the node in bytes (RssAnon from /proc). */
    public long anonymousRss() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid()), "status"))) {
            if (line.startsWith("RssAnon:")) {
                return Long.parseLong(line.replaceAll("\\D", "")) * 1024;
            }
        }
        throw new IOException("no RssAnon for pid " + pid());
    }

    /** Waits up to {@code seconds} for the node to exit by itself; returns its exit code, or -1 if it still runs. */
    public int awaitExit(int seconds) throws InterruptedException {
        return process.waitFor(seconds, TimeUnit.SECONDS) ? process.exitValue() : -1;
    }

    /** SIGTERM and wait for the graceful shutdown; returns the exit code. */
    public int stop() throws InterruptedException {
        long jvm = javaPid();
        if (jvm != process.pid()) { // under a wrapper, which exits with the JVM once its shutdown is done
            ProcessHandle.of(jvm).ifPresent(ProcessHandle::destroy);
        } else {
            process.destroy();
        }
        if (!process.waitFor(120, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
            throw new AssertionError("kvtier did not stop within 120 s of SIGTERM:\n" + logText());
        }
        return process.exitValue();
    }

    /**
     * kill -9 of the JVM and whatever runs it. Under a wrapper the JVM goes first, so that the wrapper sees it exit and
     * cleans up after itself (faketime's semaphore and shared memory) before it is killed too.
     */
    public void kill() throws InterruptedException {
        List<ProcessHandle> below = process.descendants().toList(); // taken first: orphans are no longer descendants
        long jvm = javaPid();
        if (jvm != process.pid()) {
            ProcessHandle.of(jvm).ifPresent(ProcessHandle::destroyForcibly);
            process.waitFor(5, TimeUnit.SECONDS);
        }
        process.destroyForcibly();
        for (ProcessHandle h : below) {
            h.destroyForcibly();
        }
        process.waitFor();
        for (ProcessHandle h : below) { // bounded: an orphan is reaped by whoever adopted it
            h.onExit().completeOnTimeout(h, 10, TimeUnit.SECONDS).join();
        }
    }

    @Override
    public void close() throws InterruptedException {
        if (isAlive()) {
            kill();
        }
    }

    /** A port for a node, below the kernel's ephemeral range: {@link LocalPorts#free}. */
    static int freePort() throws IOException {
        return LocalPorts.free();
    }


    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
