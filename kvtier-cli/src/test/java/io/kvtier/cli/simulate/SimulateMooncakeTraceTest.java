package io.kvtier.cli.simulate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.common.Json;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * {@code kvtier simulate --trace} on a Mooncake-format file, mooncake-small.jsonl (512-token blocks), whose hits are
 * counted by hand. Stored: 1 2 3, then 5 6 7, then 8, then 10; never a partial last block (4, 9).
 * <pre>
 * request  full blocks looked up  hit         why
 *  1       1 2 3                  0           nothing stored yet
 *  2       1 2   (4 partial)      2
 *  3       1 5 6 7                1           5 misses
 *  4       1 2   (4 partial)      2           4 was never stored
 *  5       1 5 8 (9 partial)      2           8 misses
 *  6       1 10 3                 1           10 misses; 3 is stored but after the first miss
 *          17                     8 = 4096 of 9720 prompt tokens (42.1%), 8 / 17 blocks (47.1%)
 * </pre>
 */
class SimulateMooncakeTraceTest {
    private static String run(String... args) throws Exception {
        SimulateCommand cmd = new SimulateCommand();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        cmd.out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        new CommandLine(cmd).parseArgs(args);
        assertThat(cmd.call()).isZero();
        return bytes.toString(StandardCharsets.UTF_8);
    }

    private static String trace() throws Exception {
        return MooncakeTraceFileTest.smallTrace().toString();
    }

    @Test
    void printsTheBlockHitRateBesideTheTokenHitRate() throws Exception {
        String table = run("--trace", trace(), "--memory", "64m", "--disk", "0", "--bytes-per-token", "1024");

        assertThat(table)
                .contains(": Mooncake format, 6 requests, 9720 prompt tokens, 20 blocks (17 full: BLK HIT = hit / "
                        + "full blocks)")
                .contains("chunks:  one per block, 512 tokens x 1024 bytes = 512 KiB; full blocks only (a partial "
                        + "last one is neither looked up nor stored); answers not stored")
                .contains("ceiling: 42.1% hit rate (47.1% of looked-up blocks, 40.0% of all blocks) with unlimited "
                        + "memory, which stores 4 MiB of chunks")
                .contains("  MEMORY    DISK      TOTAL          HIT  BLK HIT  ALL BLK  MEM HIT DISK HIT  READ MEM")
                .contains("  64 MiB    0 B       64 MiB       42.1%    47.1%    40.0%    42.1%     0.0%  4 MiB ");
    }

    @Test
    void comparesPoliciesSideBySide() throws Exception {
        String table = run("--trace", trace(), "--memory", "1m,64m", "--disk", "0", "--bytes-per-token", "1024",
                "--policy", "lru,s3fifo,chain");
        assertThat(table).contains("  MEMORY    DISK      TOTAL     POLICY       HIT  BLK HIT  ALL BLK");
        List<String> rows = table.lines().filter(l -> l.matches("  \\d+ MiB .*")).toList();
        assertThat(rows).hasSize(6);
        assertThat(rows).extracting(l -> l.substring(32, 39).trim())
                .containsExactly("lru", "s3fifo", "chain", "lru", "s3fifo", "chain");
        assertThat(table).containsPattern("simulated 6 requests x 6 budgets and policies in");
    }

    @Test
    void jsonCountsHitAndLookedUpBlocks() throws Exception {
        Map<?, ?> o = (Map<?, ?>) Json.parse(run("--trace", trace(), "--memory", "64m", "--disk", "0,1g",
                "--bytes-per-token", "1024", "--json"));

        Map<?, ?> trace = (Map<?, ?>) o.get("trace");
        assertThat(trace.get("format")).isEqualTo("mooncake");
        assertThat(number(trace, "blocks")).isEqualTo(20);
        assertThat(number(trace, "looked_up_blocks")).isEqualTo(17);
        assertThat(number((Map<?, ?>) o.get("chunks"), "chunk_tokens")).isEqualTo(512);
        List<?> results = (List<?>) o.get("results");
        assertThat(results).hasSize(2);
        for (Object r : results) {
            Map<?, ?> result = (Map<?, ?>) r;
            assertThat(number(result, "hit_blocks")).isEqualTo(8);
            assertThat(number(result, "looked_up_blocks")).isEqualTo(17);
            assertThat(((BigDecimal) result.get("block_hit_rate")).doubleValue()).isEqualTo(8.0 / 17);
            assertThat(number(result, "memory_hit_tokens")).isEqualTo(4096);
        }
        assertThat(((BigDecimal) ((Map<?, ?>) o.get("unlimited")).get("block_hit_rate")).doubleValue())
                .isEqualTo(8.0 / 17);
    }

    private static long number(Map<?, ?> o, String field) {
        return ((BigDecimal) o.get(field)).longValueExact();
    }

    @Test
    void anExplicitChunkSizeIsTheBlockSizeTheFileIsCheckedAgainst() {
        assertThatThrownBy(() -> run("--trace", trace(), "--memory", "64m", "--disk", "0", "--chunk-tokens", "256"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageEndingWith("mooncake-small.jsonl line 1: input_length 1536 makes 6 blocks of 256 tokens "
                        + "(the last one partial or full), but hash_ids has 3; if the trace was made with blocks of "
                        + "another size, give that size as --chunk-tokens");
    }

    @Test
    void refusesToSaveAnswersItHasNoIdsFor() {
        assertThatThrownBy(() -> run("--trace", trace(), "--memory", "64m", "--disk", "0", "--save-decode"))
                .hasMessageStartingWith("--save-decode needs keys for the answers' chunks");
    }
}
