package io.kvtier.cli.simulate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.common.Json;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The command end to end in this JVM: table, JSON, charts, and the errors a user can make. */
class SimulateCommandTest {
    /** A small synthetic service with 4 MiB chunks (16 tokens x 256 KiB): runs in well under a second. */
    private static final String[] SMALL = {"--sessions", "200", "--turns", "4", "--system-tokens", "64",
        "--user-tokens", "40", "--answer-tokens", "60", "--chunk-tokens", "16", "--bytes-per-token", "262144",
        "--max-context", "4096", "--think-time", "20s", "--arrival-window", "5m"};

    @TempDir
    Path dir;

    private static String run(String... args) throws Exception {
        SimulateCommand cmd = new SimulateCommand();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        cmd.out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        CommandLine cli = new CommandLine(cmd);
        cli.parseArgs(args);
        assertThat(cmd.call()).isZero();
        return bytes.toString(StandardCharsets.UTF_8);
    }

    private static String[] with(String... more) {
        String[] all = new String[SMALL.length + more.length];
        System.arraycopy(SMALL, 0, all, 0, SMALL.length);
        System.arraycopy(more, 0, all, SMALL.length, more.length);
        return all;
    }

    @Test
    void printsOneRowPerBudgetAndWritesThePngAndSvgCharts() throws Exception {
        Path png = dir.resolve("sweep.png");
        Path svg = dir.resolve("sweep.svg");

        String table = run(with("--memory", "64m,256m", "--disk", "0,1g,4g", "--chart", png.toString()));
        run(with("--memory", "64m,256m", "--disk", "0,1g,4g", "--chart", svg.toString()));

        List<String> rows = table.lines().filter(l -> l.matches("  \\d+ MiB .*")).toList();
        assertThat(rows).hasSize(6);
        assertThat(rows.getFirst()).startsWith("  64 MiB    0 B       64 MiB ");
        assertThat(rows.get(2)).startsWith("  64 MiB    4 GiB     4.1 GiB ");
        assertThat(table).contains("  MEMORY    DISK      TOTAL          HIT  MEM HIT DISK HIT  READ MEM")
                .contains("trace:   synthetic chat (seed 1): 200 sessions, ")
                .contains("chunks:  16 tokens x 262144 bytes = 4 MiB; full chunks only; prompts stored")
                .containsPattern("ceiling: \\d+\\.\\d% hit rate with unlimited memory")
                .containsPattern("simulated \\d+ requests x 6 budgets and policies in \\d+\\.\\d s")
                .contains("chart: " + png);
        assertThat(Files.size(png)).isGreaterThan(10_000);
        assertThat(Files.size(svg)).isGreaterThan(10_000);
        assertThat(Files.readString(svg)).contains("<svg");
    }

    @Test
    void jsonHasEveryBudgetWithRatesThatAddUp() throws Exception {
        Map<?, ?> o = (Map<?, ?>) Json.parse(run(with("--memory", "64m", "--disk", "0,1g", "--json")));

        assertThat(o.get("format")).isEqualTo("kvtier-simulate/1");
        List<?> results = (List<?>) o.get("results");
        assertThat(results).hasSize(2);
        Map<?, ?> withDisk = (Map<?, ?>) results.get(1);
        assertThat(number(withDisk, "disk_bytes")).isEqualTo(1L << 30);
        assertThat(number(withDisk, "memory_hit_tokens") + number(withDisk, "disk_hit_tokens"))
                .isPositive();
        double rate = ((java.math.BigDecimal) withDisk.get("hit_rate")).doubleValue();
        double memoryOnly = ((java.math.BigDecimal) ((Map<?, ?>) results.get(0)).get("hit_rate")).doubleValue();
        assertThat(rate).isGreaterThan(memoryOnly);
        assertThat(((Map<?, ?>) o.get("chunks")).get("chunk_bytes")).hasToString("4194304");
        assertThat(o.get("chart")).isNull();
    }

    private static long number(Map<?, ?> o, String field) {
        return ((java.math.BigDecimal) o.get(field)).longValueExact();
    }

    @Test
    void replaysAJsonlTrace() throws Exception {
        Path trace = dir.resolve("trace.jsonl");
        Files.writeString(trace, """
                {"session": "a", "turn": 0, "prompt_tokens": 40, "new_tokens": 8}
                {"session": "a", "turn": 1, "prompt_tokens": 64, "new_tokens": 8}
                """);

        String table = run("--trace", trace.toString(), "--memory", "64m", "--disk", "0", "--chunk-tokens", "16",
                "--bytes-per-token", "1024");

        // turn 0 stores 2 chunks (32 tokens); turn 1 hits them: 32 of 104 prompt tokens
        assertThat(table).contains("1 sessions, 2 requests, 104 prompt tokens").contains(" 30.8% ");
    }

    @Test
    void takesBytesPerTokenFromTheModelTable() throws Exception {
        Path trace = dir.resolve("trace.jsonl");
        Files.writeString(trace, """
                {"session": "a", "turn": 0, "prompt_tokens": 600, "new_tokens": 8}
                """);

        String table = run("--trace", trace.toString(), "--memory", "1g", "--disk", "0", "--model", "qwen3-8b");

        assertThat(table).contains("256 tokens x 147456 bytes = 36 MiB");
        assertThatThrownBy(() -> run("--trace", trace.toString(), "--model", "qwen3-8b", "--bytes-per-token", "1"))
                .hasMessageContaining("not both");
        assertThatThrownBy(() -> run("--trace", trace.toString(), "--model", "gpt-5"))
                .hasMessageContaining("not in the built-in table");
    }

    @Test
    void refusesBudgetsTheStoreWouldRefuse() {
        assertThatThrownBy(() -> run(with("--memory", "64m", "--disk", "8m")))
                .hasMessageContaining("--disk 8388608 is below the minimum 16777216 (16 MiB); 0 means no disk tier");
        assertThatThrownBy(() -> run(with("--memory", "lots")))
                .hasMessageStartingWith("--memory: 'lots' is not a size");
        assertThatThrownBy(() -> run(with("--memory", "64m", "--chart", dir.resolve("x.gif").toString())))
                .hasMessageContaining("must end in .png or .svg");
    }

    @Test
    void budgetsAreTheCrossProductMemoryMajor() {
        SimulateCommand cmd = new SimulateCommand();
        new CommandLine(cmd).parseArgs("--memory", "1g,2g", "--disk", "0,16g");

        assertThat(cmd.budgets()).extracting(b -> (b.memoryBytes() >> 30) + "/" + (b.diskBytes() >> 30))
                .containsExactly("1/0", "1/16", "2/0", "2/16");
    }

    @Test
    void defaultsDescribeAMidSizedChatService() {
        SimulateCommand cmd = new SimulateCommand();
        new CommandLine(cmd).parseArgs();

        assertThat(cmd.chatOptions()).isEqualTo(io.kvtier.kvcache.simulate.ChatTraceOptions.defaults());
        assertThat(cmd.budgets()).hasSize(12);
    }
}
