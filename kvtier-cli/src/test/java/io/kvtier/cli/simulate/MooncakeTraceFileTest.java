package io.kvtier.cli.simulate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.kvcache.simulate.BlockTrace;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** Mooncake's JSONL format: told apart from kvtier's chat format, read, and its errors named by line. */
class MooncakeTraceFileTest {
    private static BlockTrace read(String text) throws IOException {
        return MooncakeTraceFile.read(new StringReader(text), "m.jsonl", 512);
    }

    private static TraceFormat detect(String text) throws IOException {
        return TraceFormat.detect(new BufferedReader(new StringReader(text)));
    }

    static Path smallTrace() throws Exception {
        return Path.of(MooncakeTraceFileTest.class.getResource("mooncake-small.jsonl").toURI());
    }

    @Test
    void aFirstRequestWithHashIdsIsMooncakesFormat() throws Exception {
        assertThat(TraceFormat.of(smallTrace())).isEqualTo(TraceFormat.MOONCAKE);
        assertThat(detect("\n  \n{\"input_length\": 10, \"hash_ids\": [0]}\n")).isEqualTo(TraceFormat.MOONCAKE);
        assertThat(detect("{\"session\": \"a\", \"turn\": 0, \"prompt_tokens\": 10, \"new_tokens\": 1}\n"))
                .isEqualTo(TraceFormat.CHAT);
        assertThat(detect("{\"timestamp\": 0, \"hash_ids\": [0, \n")).as("bad JSON: the chat reader names it")
                .isEqualTo(TraceFormat.CHAT);
        assertThat(detect("")).isEqualTo(TraceFormat.CHAT);
        assertThat(TraceFormat.MOONCAKE.defaultChunkTokens).isEqualTo(512);
        assertThat(TraceFormat.CHAT.defaultChunkTokens).isEqualTo(256);
    }

    @Test
    void readsTheSmallTraceInTimestampOrder() throws Exception {
        BlockTrace t = (BlockTrace) TraceFormat.MOONCAKE.read(java.nio.file.Files.newBufferedReader(smallTrace()),
                "mooncake-small.jsonl", 512);

        assertThat(t.size()).isEqualTo(6);
        assertThat(t.blockTokens()).isEqualTo(512);
        assertThat(t.totalPromptTokens()).isEqualTo(9720);
        assertThat(t.totalBlocks()).isEqualTo(20);
        assertThat(t.fullBlocks()).isEqualTo(17);
        assertThat(t.blocks(4)).isEqualTo(4);
        assertThat(t.blockId(4, 2)).isEqualTo(8);
    }

    @Test
    void servesOutOfOrderTimestampsSortedTiesInFileOrder() throws IOException {
        BlockTrace t = read("""
                {"timestamp": 500, "input_length": 100, "output_length": 1, "hash_ids": [1]}
                {"timestamp": 20, "input_length": 200, "output_length": 1, "hash_ids": [2]}
                {"timestamp": 500, "input_length": 300, "output_length": 1, "hash_ids": [3]}
                {"input_length": 1, "hash_ids": [4], "timestamp": 20.5}
                """);

        assertThat(t.promptTokens(0)).isEqualTo(200);
        assertThat(t.promptTokens(1)).isEqualTo(1);
        assertThat(t.blockId(2, 0)).isEqualTo(1);
        assertThat(t.blockId(3, 0)).isEqualTo(3);
        assertThat(t.newTokens(1)).as("output_length is optional").isZero();
    }

    @Test
    void takesTheBlockSizeItIsGiven() throws IOException {
        BlockTrace t = MooncakeTraceFile.read(new StringReader("{\"input_length\": 40, \"hash_ids\": [1, 2, 3]}"),
                "m.jsonl", 16);

        assertThat(t.fullBlocks()).isEqualTo(2);
    }

    @Test
    void namesTheLineOfMissingOrMalformedHashIds() {
        assertThatThrownBy(() -> read("""
                {"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": [0]}
                {"timestamp": 1, "input_length": 10, "output_length": 1}
                """)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("m.jsonl line 2: \"hash_ids\" is missing");
        assertThatThrownBy(() -> read("{\"input_length\": 10, \"hash_ids\": \"0 1\"}"))
                .hasMessage("m.jsonl line 1: \"hash_ids\" must be a list of block ids, not 0 1");
        assertThatThrownBy(() -> read("{\"input_length\": 600, \"hash_ids\": [0, 1.5]}"))
                .hasMessage("m.jsonl line 1: \"hash_ids\"[1] must be a whole number >= 0, not 1.5");
        assertThatThrownBy(() -> read("{\"input_length\": 600, \"hash_ids\": [0, \"a\"]}"))
                .hasMessage("m.jsonl line 1: \"hash_ids\"[1] must be a whole number >= 0, not a");
        assertThatThrownBy(() -> read("{\"input_length\": 600, \"hash_ids\": [-3, 1]}"))
                .hasMessage("m.jsonl line 1: \"hash_ids\"[0] must be a whole number >= 0, not -3");
    }

    @Test
    void namesTheLineOfALengthThatDoesNotMatchItsBlocks() {
        assertThatThrownBy(() -> read("""
                {"timestamp": 0, "input_length": 1024, "output_length": 1, "hash_ids": [0, 1]}

                {"timestamp": 0, "input_length": 1025, "output_length": 1, "hash_ids": [0, 1]}
                """)).hasMessage("m.jsonl line 3: input_length 1025 makes 3 blocks of 512 tokens (the last one "
                + "partial or full), but hash_ids has 2; if the trace was made with blocks of another size, give "
                + "that size as --chunk-tokens");
    }

    @Test
    void namesTheLineOfANegativeOrMissingNumber() {
        assertThatThrownBy(() -> read("{\"input_length\": -5, \"hash_ids\": []}"))
                .hasMessage("m.jsonl line 1: input_length -5 must be between 1 and 2147483647");
        assertThatThrownBy(() -> read("{\"input_length\": 5, \"output_length\": -1, \"hash_ids\": [0]}"))
                .hasMessage("m.jsonl line 1: output_length -1 must be between 0 and 2147483647");
        assertThatThrownBy(() -> read("{\"timestamp\": -10, \"input_length\": 5, \"hash_ids\": [0]}"))
                .hasMessage("m.jsonl line 1: \"timestamp\" -10 must be >= 0 (milliseconds)");
        assertThatThrownBy(() -> read("{\"hash_ids\": [0]}")).hasMessage("m.jsonl line 1: \"input_length\" is missing");
        assertThatThrownBy(() -> read("{\"input_length\": 5.5, \"hash_ids\": [0]}"))
                .hasMessage("m.jsonl line 1: \"input_length\" must be a whole number, not 5.5");
        assertThatThrownBy(() -> read("""
                {"timestamp": 3, "input_length": 5, "hash_ids": [0]}
                {"input_length": 5, "hash_ids": [0]}
                """)).hasMessage("m.jsonl line 2: timestamp is missing; earlier requests have one, so every request "
                + "needs one");
        assertThatThrownBy(() -> read("[1]\n")).hasMessageStartingWith("m.jsonl line 1: expected a JSON object like "
                + "{\"timestamp\": 0, \"input_length\": 1200");
        assertThatThrownBy(() -> read("\n")).hasMessage("m.jsonl: the trace has no requests");
    }
}
