package io.kvtier.it;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Runs external tools (redis-cli, redis-benchmark, python3) with a timeout, feeding stdin and capturing output. */
public final class Tools {
    /** What a finished tool left behind. */
    public record Result(int exitCode, String stdout, String stderr) {
    }

    private Tools() {
    }

    public static Result run(Duration timeout, byte[] stdin, List<String> command) throws IOException,
            InterruptedException {
        Process p = new ProcessBuilder(command).start();
        CompletableFuture<byte[]> out = CompletableFuture.supplyAsync(() -> readAll(p.getInputStream()));
        CompletableFuture<byte[]> err = CompletableFuture.supplyAsync(() -> readAll(p.getErrorStream()));
        try (OutputStream in = p.getOutputStream()) {
            if (stdin != null) {
                in.write(stdin);
            }
        }
        if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            p.destroyForcibly().waitFor();
            throw new AssertionError(command + " did not finish within " + timeout);
        }
        return new Result(p.exitValue(), new String(out.join(), StandardCharsets.UTF_8),
                new String(err.join(), StandardCharsets.UTF_8));
    }

    public static Result run(Duration timeout, String... command) throws IOException, InterruptedException {
        return run(timeout, null, List.of(command));
    }

    private static byte[] readAll(java.io.InputStream in) {
        try {
            return in.readAllBytes();
        } catch (IOException e) {
            return new byte[0];
        }
    }
}
