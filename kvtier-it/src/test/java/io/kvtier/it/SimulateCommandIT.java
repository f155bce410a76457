package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real {@code ./kvtier simulate} launcher as a process: a small synthetic sweep with a chart, then a JSONL
 * trace as JSON, then a bad trace line (exit code 2, the line named on stderr).
 */
class SimulateCommandIT {
    @TempDir
    Path dir;

    private static Tools.Result kvtier(String... args) throws Exception {
        List<String> cmd = new java.util.ArrayList<>(List.of(KvtierProcess.ROOT.resolve("kvtier").toString(),
                "simulate"));
        cmd.addAll(List.of(args));
        return Tools.run(Duration.ofMinutes(2), null, cmd);
    }

    @Test
    void printsTheSweepTableAndDrawsTheChart() throws Exception {
        Path chart = dir.resolve("sweep.svg");

        Tools.Result r = kvtier("--sessions", "300", "--memory", "4g,16g", "--disk", "0,64g,256g", "--chart",
                chart.toString());

        assertThat(r.exitCode()).as(r.stderr()).isZero();
        assertThat(r.stdout()).contains("  MEMORY    DISK      TOTAL          HIT  MEM HIT DISK HIT")
                .contains("chunks:  256 tokens x 131072 bytes = 32 MiB")
                .containsPattern("simulated \\d+ requests x 6 budgets and policies in \\d+\\.\\d s");
        assertThat(r.stdout().lines().filter(l -> l.matches("  (4|16) GiB .*%.*"))).hasSize(6);
        assertThat(Files.size(chart)).isGreaterThan(10_000);
    }

    @Test
    void replaysAJsonlTraceAsJsonAndNamesABadLine() throws Exception {
        Path trace = dir.resolve("trace.jsonl");
        Files.writeString(trace, """
                {"session": "a", "turn": 0, "prompt_tokens": 1000, "new_tokens": 200, "time": 0}
                {"session": "a", "turn": 1, "prompt_tokens": 1400, "new_tokens": 200, "time": 60}
                """);

        Tools.Result ok = kvtier("--trace", trace.toString(), "--memory", "1g", "--disk", "0", "--json");

        assertThat(ok.exitCode()).as(ok.stderr()).isZero();
        assertThat(ok.stdout()).contains("\"format\": \"kvtier-simulate/1\"", "\"requests\": 2",
                "\"memory_hit_tokens\": 768", "\"prompt_tokens\": 2400");

        Files.writeString(trace, "{\"session\": \"a\", \"turn\": 0, \"prompt_tokens\": 1000}\n");
        Tools.Result bad = kvtier("--trace", trace.toString());

        assertThat(bad.exitCode()).isEqualTo(2);
        assertThat(bad.stderr()).contains("line 1: \"new_tokens\" is missing");
    }
}
