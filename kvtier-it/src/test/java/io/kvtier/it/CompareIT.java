package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.bench.compare.CompareOptions;
import io.kvtier.bench.compare.CompareRun;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A tiny real {@code kvtier bench compare}: kvtier (through the repo's launcher) and redis-server from PATH with a
 * 64 MiB cap, 64 KiB setget and a 64 MiB overflow in 300 ms passes, and redis-benchmark's small-value commands
 * (100 B, 2,000 requests). An integration test so that it runs after the jar is built.
 */
class CompareIT {
    @TempDir
    Path out;

    @Test
    void writesTheReportAndChartsWithPositiveRatios() throws Exception {
        Path repo = KvtierProcess.ROOT;
        CompareOptions options = new CompareOptions(64L << 20, 1L << 30, 1, Duration.ofMillis(300),
                Duration.ofMillis(400), List.of("setget", "overflow", "small"), List.of(64 << 10), List.of(100), 2_000,
                List.of(2), 2, true, true, out, repo.resolve("kvtier"), 1);
        ByteArrayOutputStream table = new ByteArrayOutputStream();

        CompareRun.Outcome outcome = CompareRun.execute(options, new PrintStream(table, true, StandardCharsets.UTF_8));

        assertThat(outcome.failed()).as(table.toString(StandardCharsets.UTF_8)).isFalse();
        assertThat(out.resolve("compare.json")).isNotEmptyFile();
        assertThat(out.resolve("compare.csv")).isNotEmptyFile();
        assertThat(outcome.charts()).isNotEmpty().allSatisfy(c -> assertThat(c.png()).isNotEmptyFile());
        assertThat(out.resolve("throughput-get-c2.png")).isNotEmptyFile();
        assertThat(out.resolve("hit-rate-overflow.png")).isNotEmptyFile();
        assertThat(outcome.comparisons()).isNotEmpty()
                .allSatisfy(c -> assertThat(c.throughputRatio()).isPositive().isFinite());
        // redis-benchmark's small-value commands, both depths, every command
        assertThat(outcome.comparisons().stream().filter(c -> c.key().workload().equals("small"))
                .map(c -> c.key().op())).containsExactlyInAnyOrder("SET P1", "GET P1", "MSET10 P1", "EXISTS P1",
                "MGET10 P1", "SET P16", "GET P16", "MSET10 P16", "EXISTS P16", "MGET10 P16");
        assertThat(Files.readString(out.resolve("compare.json"))).contains("\"kvtier-bench-compare/1\"",
                "\"ratios\"", "\"passes\"");
    }
}
