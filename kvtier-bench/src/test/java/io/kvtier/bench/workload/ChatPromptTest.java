package io.kvtier.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class ChatPromptTest {

    @Test
    void aPromptSplitsIntoItsFullChunksOnly() {
        assertThat(new ChatPrompt(1, 2, 100, 1000).chunkHashes(256)).hasSize(3);
        assertThat(new ChatPrompt(1, 2, 100, 1024).chunkHashes(256)).hasSize(4);
        assertThat(new ChatPrompt(1, 2, 100, 255).chunkHashes(256)).isEmpty();
    }

    @Test
    void conversationsWithTheSameSystemPromptShareTheChunksItFillsAndNothingAfter() {
        long[] a = new ChatPrompt(1, 10, 600, 2048).chunkHashes(256);
        long[] b = new ChatPrompt(1, 11, 600, 2048).chunkHashes(256);
        assertThat(Arrays.copyOf(a, 2)).isEqualTo(Arrays.copyOf(b, 2));
        for (int k = 2; k < a.length; k++) {
            assertThat(a[k]).as("chunk %d", k).isNotEqualTo(b[k]);
        }
    }

    @Test
    void aLongerPromptOfTheSameConversationExtendsTheChainOfTheShorterOne() {
        long[] turn1 = new ChatPrompt(1, 10, 600, 1000).chunkHashes(256);
        long[] turn2 = new ChatPrompt(1, 10, 600, 1900).chunkHashes(256);
        assertThat(turn2).hasSize(7).startsWith(turn1);
    }

    @Test
    void aDifferentFirstChunkChangesEveryHashAfterIt() {
        long[] a = new ChatPrompt(1, 10, 256, 2048).chunkHashes(256);
        long[] b = new ChatPrompt(2, 10, 256, 2048).chunkHashes(256);
        for (int k = 0; k < a.length; k++) {
            assertThat(a[k]).as("chunk %d", k).isNotEqualTo(b[k]);
        }
    }

    @Test
    void hashesAreDistinctAlongAChain() {
        long[] hashes = new ChatPrompt(1, 10, 0, 256 * 64).chunkHashes(256);
        assertThat(Arrays.stream(hashes).distinct().count()).isEqualTo(64);
    }
}
