package io.kvtier.bench.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class FleetProgressTest {
    @Test
    void theLineShowsTimeGoneRequestsErrorsAndTtft() {
        FleetProgress progress = new FleetProgress(System.err, "2 req/s", 0, 10_000_000_000L, true);
        List<RequestResult> results = List.of(LatencyStatsTest.ok(100, 1), LatencyStatsTest.ok(300, 1),
                LatencyStatsTest.failed("x"));

        String line = FleetProgress.line(progress.snapshot(4, results, 5_000_000_000L));

        assertThat(line).startsWith("[" + "=".repeat(15) + " ".repeat(15) + "]  50% 2 req/s")
                .contains("      4 req", "0.80 req/s", "    1 err", "TTFT p50  0.200 s", "5.0 s");
    }

    @Test
    void beforeAnyAnswerTheTtftIsADash() {
        String line = FleetProgress.line(new FleetProgress(System.err, "x", 0, 1, true).snapshot(0, List.of(), 0));
        assertThat(line).contains("TTFT p50      - s").startsWith("[" + " ".repeat(30) + "]   0%");
    }

    @Test
    void ticksUntilStoppedThenEndsTheLine() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        FleetProgress progress = new FleetProgress(out, "p", System.nanoTime(), System.nanoTime() + 1_000_000_000L, true);
        CompletableFuture<Void> ticking = CompletableFuture.runAsync(() -> progress.tickUntil(new AtomicLong(3),
                List.of()));

        progress.stop();
        ticking.get(5, TimeUnit.SECONDS);

        String text = bytes.toString(StandardCharsets.UTF_8);
        assertThat(text).startsWith("\r[").endsWith("\n").contains("      3 req");
    }

    @Test
    void aLogGetsWholeLinesWithoutCarriageReturns() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        FleetProgress progress = new FleetProgress(out, "p", System.nanoTime(), System.nanoTime() + 1_000_000_000L,
                false);
        CompletableFuture<Void> ticking = CompletableFuture.runAsync(() -> progress.tickUntil(new AtomicLong(2),
                List.of()));

        Thread.sleep(600); // two ticks: redrawn on a terminal, nothing in a log until its 10 s line
        progress.stop();
        ticking.get(5, TimeUnit.SECONDS);

        String text = bytes.toString(StandardCharsets.UTF_8);
        assertThat(text).doesNotContain("\r").startsWith("[").endsWith("\n").contains("      2 req");
        assertThat(text.lines()).hasSize(1);
    }
}
