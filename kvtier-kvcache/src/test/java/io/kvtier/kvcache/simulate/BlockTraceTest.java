package io.kvtier.kvcache.simulate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** A trace that names its blocks: the length check, the last-block rule and the order it is served in. */
class BlockTraceTest {
    @Test
    void aPromptHasOneIdPerBlockTheLastOneHoldingTheRest() {
        BlockTrace t = BlockTrace.builder(4)
                .add(null, 10, 3, new long[] {7, 8, 9})   // 4 + 4 + 2 tokens
                .add(null, 8, 0, new long[] {7, 8})       // 4 + 4
                .add(null, 1, 0, new long[] {5})          // 1
                .build();

        assertThat(t.size()).isEqualTo(3);
        assertThat(t.blocks(0)).isEqualTo(3);
        assertThat(t.blockId(0, 2)).isEqualTo(9);
        assertThat(t.chunkKey(1, 1, 4)).isEqualTo(8);
        assertThat(t.totalBlocks()).isEqualTo(6);
        assertThat(t.fullBlocks()).as("the partial last blocks (2 and 1 tokens) are not full").isEqualTo(4);
        assertThat(t.totalPromptTokens()).isEqualTo(19);
        assertThat(t.newTokens(0)).isEqualTo(3);
    }

    @Test
    void refusesAPromptWhoseIdsDoNotCoverItInBlocks() {
        BlockTrace.Builder b = BlockTrace.builder(512);

        assertThatThrownBy(() -> b.add(null, 1300, 5, new long[] {1, 2}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("input_length 1300 makes 3 blocks of 512 tokens (the last one partial or full), but "
                        + "hash_ids has 2; if the trace was made with blocks of another size, give that size as "
                        + "--chunk-tokens");
        assertThatThrownBy(() -> b.add(null, 1024, 5, new long[] {1, 2, 3}))
                .hasMessageStartingWith("input_length 1024 makes 2 blocks of 512 tokens");
        assertThatThrownBy(() -> b.add(null, 100, 5, new long[0]))
                .hasMessageStartingWith("input_length 100 makes 1 block of 512 tokens");
    }

    @Test
    void refusesNegativeLengthsAndIds() {
        BlockTrace.Builder b = BlockTrace.builder(4);

        assertThatThrownBy(() -> b.add(null, -4, 0, new long[] {1}))
                .hasMessage("input_length -4 must be between 1 and 2147483647");
        assertThatThrownBy(() -> b.add(null, 0, 0, new long[0])).hasMessageStartingWith("input_length 0 must be");
        assertThatThrownBy(() -> b.add(null, 4, -1, new long[] {1}))
                .hasMessage("output_length -1 must be between 0 and 2147483647");
        assertThatThrownBy(() -> b.add(null, 8, 0, new long[] {1, -2})).hasMessage("hash_ids[1] is -2; ids are >= 0");
        assertThatThrownBy(() -> BlockTrace.builder(0)).hasMessage("--chunk-tokens 0 must be at least 1");
        assertThatThrownBy(() -> BlockTrace.builder(4).build()).hasMessage("the trace has no requests");
    }

    @Test
    void servesRequestsInTimestampOrderKeepingTiesInInputOrder() {
        BlockTrace t = BlockTrace.builder(4)
                .add(5.0, 4, 0, new long[] {1})
                .add(1.0, 8, 0, new long[] {2, 3})
                .add(5.0, 12, 0, new long[] {4, 5, 6})
                .build();

        assertThat(t.promptTokens(0)).isEqualTo(8);
        assertThat(t.blockId(0, 1)).isEqualTo(3);
        assertThat(t.blockId(1, 0)).isEqualTo(1);
        assertThat(t.blocks(2)).isEqualTo(3);
        assertThat(t.blockId(2, 2)).isEqualTo(6);
    }

    @Test
    void refusesTimestampsOnSomeRequestsOnly() {
        BlockTrace.Builder b = BlockTrace.builder(4).add(0.0, 4, 0, new long[] {1});

        assertThatThrownBy(() -> b.add(null, 4, 0, new long[] {1}))
                .hasMessage("timestamp is missing; earlier requests have one, so every request needs one");
    }

    @Test
    void replaysOnlyWithChunksOfItsBlocksAndWithoutAnswers() {
        BlockTrace t = BlockTrace.builder(4).add(null, 4, 0, new long[] {1}).build();

        assertThat(t.refusal(new ChunkOptions(4, 1024, false))).isNull();
        assertThat(t.refusal(new ChunkOptions(8, 1024, false)))
                .isEqualTo("--chunk-tokens 8 differs from the trace's blocks of 4 tokens: each hash_ids entry is "
                        + "one chunk");
        assertThat(t.refusal(new ChunkOptions(4, 1024, true))).startsWith("--save-decode needs keys for the answers");
    }
}
