package io.kvtier.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real Redis Cluster for tests: {@code n} redis-server processes (from PATH) in cluster mode on free loopback ports,
 * joined with {@code redis-cli --cluster create} and no replicas; full coverage is not required, so a killed node
 * only takes its own slots down. Owns the processes; {@link #close} kills them. Shared with kvtier-bench's tests
 * (test-jar).
 */
public final class RedisCluster implements AutoCloseable {
    /** The nodes' ports, in the order they were started. */
    public final List<Integer> ports = new ArrayList<>();
    private final List<Process> processes = new ArrayList<>();

    /** Starts {@code n} nodes with their directories under {@code dir} and waits until the cluster is ok. */
    public static RedisCluster start(Path dir, int n) throws Exception {
        RedisCluster c = new RedisCluster();
        try {
            for (int i = 0; i < n; i++) {
                int port = RedisServerProcess.freePort();
                Path d = Files.createDirectories(dir.resolve("redis-" + port));
                c.ports.add(port);
                c.processes.add(new ProcessBuilder("redis-server", "--port", Integer.toString(port), "--bind",
                        "127.0.0.1", "--dir", d.toString(), "--cluster-enabled", "yes", "--cluster-config-file",
                        "nodes.conf", "--cluster-require-full-coverage", "no", "--save", "", "--appendonly", "no")
                        .redirectErrorStream(true).redirectOutput(d.resolve("log").toFile()).start());
            }
            for (int port : c.ports) {
                c.awaitAnswer(port, "PING", "PONG");
            }
            List<String> create = new ArrayList<>(List.of("redis-cli", "--cluster", "create"));
            c.ports.forEach(p -> create.add("127.0.0.1:" + p));
            create.addAll(List.of("--cluster-replicas", "0", "--cluster-yes"));
            Process p = new ProcessBuilder(create).redirectErrorStream(true).start();
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("redis-cli --cluster create failed:\n" + output);
            }
            for (int port : c.ports) {
                c.awaitAnswer(port, "CLUSTER INFO", "cluster_state:ok");
            }
            return c;
        } catch (Exception e) {
            c.close();
            throw e;
        }
    }

    /** Runs redis-cli against {@code port} and returns its output, trimmed. */
    public static String cli(int port, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("redis-cli", "-p", Integer.toString(port)));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        p.waitFor(10, TimeUnit.SECONDS);
        return out;
    }

    private void awaitAnswer(int port, String command, String expected) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!cli(port, command.split(" ")).contains(expected)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("redis-server on " + port + " never answered " + command + " with "
                        + expected);
            }
            Thread.sleep(50);
        }
    }

    /** kill -9 of node {@code i}. */
    public void kill(int i) throws InterruptedException {
        processes.get(i).destroyForcibly().waitFor(5, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        for (Process p : processes) {
            p.destroyForcibly();
        }
        for (Process p : processes) {
            try {
                p.waitFor(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
