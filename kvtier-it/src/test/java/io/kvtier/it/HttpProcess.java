package io.kvtier.it;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A kvtier command that serves HTTP ({@code ./kvtier engine-sim}, {@code ./kvtier router}) run as a real process
 * through the launcher, logging to a file, up once its {@code /health} answers (any status). kill() is kill -9.
 */
final class HttpProcess implements AutoCloseable {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final Process process;
    private final Path log;
    private final String host;
    private final int port;

    private HttpProcess(Process process, Path log, String host, int port) {
        this.process = process;
        this.log = log;
        this.host = host;
        this.port = port;
    }

    static HttpProcess start(Path log, int port, String... args) throws IOException, InterruptedException {
        return startAt("127.0.0.1", java.util.Map.of(), log, port, args);
    }

    /** Like {@link #start}, answering on {@code host} (its --host), with {@code env} added to its environment. */
    static HttpProcess startAt(String host, java.util.Map<String, String> env, Path log, int port, String... args)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(KvtierProcess.ROOT.resolve("kvtier").toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder b = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        b.environment().put("KVTIER_HEAP", "-Xmx256m");
        b.environment().putAll(env);
        HttpProcess p = new HttpProcess(b.start(), log, host, port);
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (System.nanoTime() < deadline) {
            if (!p.process.isAlive()) {
                throw new IllegalStateException(String.join(" ", args) + " exited: " + Files.readString(log));
            }
            try {
                p.get("/health");
                return p;
            } catch (IOException e) {
                Thread.sleep(100);
            }
        }
        p.close();
        throw new IllegalStateException(String.join(" ", args) + " did not answer in 60 s: " + Files.readString(log));
    }

    int port() {
        return port;
    }

    HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://" + host + ":" + port + path))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> post(String path, String body) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://" + host + ":" + port + path))
                .timeout(Duration.ofSeconds(30)).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    String logText() throws IOException {
        return Files.readString(log);
    }

    void kill() throws InterruptedException {
        process.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws InterruptedException {
        process.toHandle().descendants().forEach(ProcessHandle::destroy);
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            kill();
        }
    }
}
