package io.kvtier.it;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A real redis-server (Debian's, from PATH) on a free port, without persistence, for side-by-side comparisons. */
public final class RedisServerProcess implements AutoCloseable {
    private final Process process;
    private final int port;

    private RedisServerProcess(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    public static RedisServerProcess start(Path dir, String... extra) throws IOException, InterruptedException {
        int port = KvtierProcess.freePort();
        List<String> cmd = new ArrayList<>(List.of("redis-server", "--port", Integer.toString(port), "--bind",
                "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir.toString(), "--daemonize", "no"));
        cmd.addAll(List.of(extra));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(dir.resolve("redis.log").toFile()).start();
        for (int i = 0; i < 100; i++) {
            Process ping = new ProcessBuilder("redis-cli", "-p", Integer.toString(port), "ping").start();
            if (ping.waitFor(5, TimeUnit.SECONDS) && new String(ping.getInputStream().readAllBytes()).trim()
                    .equals("PONG")) {
                return new RedisServerProcess(p, port);
            }
            Thread.sleep(100);
        }
        p.destroyForcibly();
        throw new IOException("redis-server did not start on port " + port);
    }

    public int port() {
        return port;
    }

    @Override
    public void close() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }
}
