package io.kvtier.kvcache.sizing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** KV bytes per token, chunk and sequence for every built-in model, against values computed by hand. */
class KvFootprintTest {
    private static KvFootprint kv(String model, Precision dtype, int tp) {
        return KvFootprint.of(ModelTable.find(model), dtype, tp);
    }

    /** layers x KV heads x head_dim x 2 (K and V) x 2 bytes (bf16); MLA: layers x (512 + 64) x 2 bytes. */
    @ParameterizedTest(name = "{0}: {1} B/token, 256-token chunk {2} B")
    @CsvSource({
        "llama-3.1-8b,     131072, 33554432",   // 32 x 8 x 128 x 2 x 2
        "llama-3.1-70b,    327680, 83886080",   // 80 x 8 x 128 x 2 x 2
        "llama-3.1-405b,   516096, 132120576",  // 126 x 8 x 128 x 2 x 2
        "qwen3-8b,         147456, 37748736",   // 36 x 8 x 128 x 2 x 2
        "qwen3-32b,        262144, 67108864",   // 64 x 8 x 128 x 2 x 2
        "qwen3-235b-a22b,  192512, 49283072",   // 94 x 4 x 128 x 2 x 2
        "mistral-7b,       131072, 33554432",   // 32 x 8 x 128 x 2 x 2
        "mixtral-8x7b,     131072, 33554432",   // 32 x 8 x 128 x 2 x 2
        "deepseek-v3,      70272,  17989632",   // 61 x (512 + 64) x 2
        "gpt-oss-120b,     73728,  18874368",   // 36 x 8 x 64 x 2 x 2
        "gemma-3-27b,      507904, 130023424",  // 62 x 16 x 128 x 2 x 2
    })
    void bytesPerTokenAndChunkMatchHandComputedValues(String model, long perToken, long chunk) {
        KvFootprint kv = kv(model, Precision.BF16, 1);
        assertThat(kv.bytesPerToken()).isEqualTo(perToken);
        assertThat(kv.workerBytesPerToken()).isEqualTo(perToken);
        assertThat(kv.chunkBytes(256)).isEqualTo(chunk);
    }

    @Test
    void llama8bChunkOf256TokensIs32MiB() {
        assertThat(kv("LLAMA-3.1-8B", Precision.BF16, 1).chunkBytes(256)).isEqualTo(32L << 20);
    }

    @Test
    void tensorParallelSplitsKvHeadsAndEveryWorkerStoresItsChunk() {
        KvFootprint kv = kv("llama-3.1-70b", Precision.BF16, 4);
        assertThat(kv.bytesPerToken()).isEqualTo(327_680);
        assertThat(kv.workerBytesPerToken()).isEqualTo(81_920);          // 80 x 2 heads x 128 x 2 x 2
        assertThat(kv.chunkBytes(256)).isEqualTo(20_971_520);            // 20 MiB per worker
        assertThat(kv.storingWorkers()).isEqualTo(4);
        assertThat(kv.storedBytesPerToken()).isEqualTo(327_680);
    }

    @Test
    void fewerKvHeadsThanWorkersAreReplicated() {
        KvFootprint kv = kv("qwen3-235b-a22b", Precision.BF16, 8);      // 4 KV heads on 8 GPUs: 1 head each
        assertThat(kv.workerBytesPerToken()).isEqualTo(48_128);          // 94 x 1 x 128 x 2 x 2
        assertThat(kv.storedBytesPerToken()).isEqualTo(8 * 48_128);      // twice the model's 192,512
    }

    @Test
    void mlaLatentIsWholeOnEveryWorkerAndStoredOnce() {
        KvFootprint kv = kv("deepseek-v3", Precision.BF16, 8);
        assertThat(kv.workerBytesPerToken()).isEqualTo(70_272);
        assertThat(kv.storingWorkers()).isEqualTo(1);
        assertThat(kv("deepseek-v3", Precision.FP8, 8).bytesPerToken()).isEqualTo(35_136);
    }

    @Test
    void slidingWindowLayersStopGrowingAtTheWindow() {
        KvFootprint gemma = kv("gemma-3-27b", Precision.BF16, 1);     // 10 global, 52 local layers of 8,192 B/token
        assertThat(gemma.workerSequenceBytes(8192, false)).isEqualTo(507_904L * 8192);
        assertThat(gemma.workerSequenceBytes(8192, true)).isEqualTo(8192L * (10 * 8192 + 52 * 1024));
        assertThat(gemma.workerSequenceBytes(512, true)).isEqualTo(507_904L * 512);
        assertThat(gemma.averageBytesPerToken(8192)).isEqualTo(135_168.0);
        KvFootprint oss = kv("gpt-oss-120b", Precision.BF16, 1);      // 18 full, 18 of 128 tokens; 2,048 B/layer
        assertThat(oss.workerSequenceBytes(8192, true)).isEqualTo(2048L * 18 * (8192 + 128));
    }

    @Test
    void tensorParallelMustDivideTheHeads() {
        assertThatThrownBy(() -> kv("llama-3.1-8b", Precision.BF16, 3))
                .hasMessage("--tp 3 does not divide the model's 32 attention heads");
        assertThatThrownBy(() -> kv("llama-3.1-8b", Precision.BF16, 0)).hasMessage("--tp 0 is below the minimum 1");
        assertThat(kv("llama-3.1-8b", Precision.BF16, 16).workerBytesPerToken()).isEqualTo(32 * 2 * 128 * 2);
    }
}
