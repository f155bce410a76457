package io.kvtier.bench.fleet;

import io.kvtier.bench.compare.ServerProcess;
import io.kvtier.client.ClientOptions;
import io.kvtier.client.ClientResources;
import io.kvtier.client.Reply;
import io.kvtier.client.RespConnection;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The kvtier node of a fleet run: a real {@code kvtier server} process with the run's budgets, publishing its store
 * events for the router, and read between points for its chunk reads by tier (INFO's per-model {@code hits_memory} and
 * {@code hits_disk}). Owns the process.
 */
final class KvtierNode implements AutoCloseable {
    private static final Pattern MODEL_LINE = Pattern.compile("hits_memory=(\\d+),hits_disk=(\\d+)");
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

    private final ServerProcess process;
    private final int eventsPort;

    /** Chunk reads served by each tier since the node started. */
    record Hits(long memory, long disk) {
        Hits minus(Hits o) {
            return new Hits(memory - o.memory, disk - o.disk);
        }
    }

    private KvtierNode(ServerProcess process, int eventsPort) {
        this.process = process;
        this.eventsPort = eventsPort;
    }

    static KvtierNode start(Path launcher, Path dir, long memoryBytes, long diskBytes)
            throws IOException, InterruptedException {
        Files.createDirectories(dir);
        int port = ServerProcess.freePort();
        int events = freePair();
        ServerProcess p = ServerProcess.start("kvtier", List.of(launcher.toString(), "server", "--port",
                Integer.toString(port), "--dir", dir.toString(), "--memory", Long.toString(memoryBytes), "--disk",
                Long.toString(diskBytes), "--kv-events", Integer.toString(events)), port, dir.resolve("kvtier.log"),
                START_TIMEOUT);
        return new KvtierNode(p, events);
    }

    /** A port whose next port is free too (--kv-events binds both), below the ephemeral range. */
    private static int freePair() throws IOException {
        for (int attempt = 0; attempt < 200; attempt++) {
            int p = 20_000 + java.util.concurrent.ThreadLocalRandom.current().nextInt(10_000);
            try (ServerSocket a = new ServerSocket(p); ServerSocket b = new ServerSocket(p + 1)) {
                return p;
            } catch (IOException busy) {
                // try another
            }
        }
        throw new IOException("no two consecutive free ports for kvtier's events");
    }

    int port() {
        return process.port();
    }

    int eventsPort() {
        return eventsPort;
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** SIGKILL: no flush, no goodbye. */
    void kill() {
        process.kill();
    }

    void flushAll() throws IOException {
        process.flushAll();
    }

    /** Chunk reads by tier so far, summed over models. */
    Hits hits() throws IOException {
        try (ClientResources resources = ClientResources.create(1)) {
            RespConnection c = RespConnection.connect(resources, "127.0.0.1", port(),
                    new ClientOptions(Duration.ofSeconds(2), Duration.ofSeconds(5))).get(5, TimeUnit.SECONDS);
            try {
                Reply r = c.send("INFO").get(5, TimeUnit.SECONDS);
                String text = r instanceof Reply.Bulk b ? b.utf8() : "";
                Reply.release(r);
                long memory = 0;
                long disk = 0;
                Matcher m = MODEL_LINE.matcher(text);
                while (m.find()) {
                    memory += Long.parseLong(m.group(1));
                    disk += Long.parseLong(m.group(2));
                }
                return new Hits(memory, disk);
            } finally {
                c.close();
            }
        } catch (Exception e) {
            throw new IOException("cannot read INFO from kvtier on port " + port() + ": " + e, e);
        }
    }

    @Override
    public void close() {
        process.close();
    }
}
