package io.kvtier.bench.fleet;

import io.kvtier.bench.compare.ServerProcess;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A {@code kvtier router} process in front of a fleet run's engines, started with the point's policy; ready once its
 * /health answers and it has seen every engine. Owns the process: {@link #close} ends it.
 */
final class RouterProcess implements AutoCloseable {
    private final Process process;
    private final int port;

    private RouterProcess(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    /**
     * @param engines     each engine as {@code URL,events=tcp://H:P}
     * @param kvtier      each kvtier node as {@code HOST:PORT,events=tcp://H:P}; none without offload
     * @param prefillRate the engines' modeled prefill tokens/s, for the kvtier policy's prices
     * @param prefetch    whether the router prefetches the disk chunks it routes to (its --prefetch)
     * @param bytesScale  the share of each chunk's real bytes the nodes hold (the run's --kv-bytes-scale): the kvtier
     *                    policy prices fetches for the real bytes, as the engines model their loads
     */
    static RouterProcess start(Path launcher, Path log, String policy, List<String> engines, List<String> kvtier,
            String lmcacheModel, int worldSize, int chunkTokens, double prefillRate, boolean prefetch,
            double bytesScale) throws IOException, InterruptedException {
        int port = ServerProcess.freePort();
        List<String> command = new ArrayList<>(List.of(launcher.toString(), "router", "--port", Integer.toString(port),
                "--policy", policy, "--lmcache-model", lmcacheModel, "--lmcache-world-size",
                Integer.toString(worldSize), "--lmcache-chunk-size",
                Integer.toString(chunkTokens), "--prefill-rate", Long.toString(Math.round(prefillRate)),
                "--fetch-probe-interval", "2000", "--probe-interval", "500", prefetch ? "--prefetch" : "--no-prefetch",
                "--kv-bytes-scale", Double.toString(bytesScale)));
        for (String e : engines) {
            command.add("--engine");
            command.add(e);
        }
        for (String node : kvtier) {
            command.add("--kvtier");
            command.add(node);
        }
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        RouterProcess router = new RouterProcess(p, port);
        try {
            router.awaitReady(engines.size());
            return router;
        } catch (IOException | InterruptedException | RuntimeException e) {
            router.close();
            throw e;
        }
    }

    private void awaitReady(int engines) throws IOException, InterruptedException {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IOException("the router exited with status " + process.exitValue() + " before it was ready");
            }
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url() + "/health"))
                        .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200 && r.body().startsWith(engines + " of " + engines + " ")) {
                    return;
                }
            } catch (IOException notYet) {
                // starting
            }
            Thread.sleep(200);
        }
        throw new IOException("the router did not see " + engines + " healthy engines within 60 s");
    }

    URI url() {
        return URI.create("http://127.0.0.1:" + port);
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}
