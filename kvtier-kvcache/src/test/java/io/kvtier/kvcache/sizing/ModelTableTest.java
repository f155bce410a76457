package io.kvtier.kvcache.sizing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ModelTableTest {
    /** Estimated from the config vs what the publisher states (Gemma 3: language model only, without vision). */
    @ParameterizedTest(name = "{0}: {1}B")
    @CsvSource({
        "llama-3.1-8b, 8.03", "llama-3.1-70b, 70.6", "llama-3.1-405b, 405.9", "qwen3-8b, 8.19", "qwen3-32b, 32.8",
        "qwen3-235b-a22b, 235.1", "mistral-7b, 7.25", "mixtral-8x7b, 46.7", "deepseek-v3, 671", "gpt-oss-120b, 116.8",
        "gemma-3-27b, 27.0",
    })
    void parameterEstimatesMatchThePublishedCounts(String model, double billions) {
        assertThat(ModelTable.find(model).parameters() / 1e9).isCloseTo(billions, within(billions * 0.005));
    }

    @Test
    void llama8bParametersAreExactBarTheNorms() {
        // 8,030,261,248 published, less 65 RMSNorm vectors of 4,096
        assertThat(ModelTable.find("llama-3.1-8b").parameters()).isEqualTo(8_030_261_248L - 65 * 4096);
    }

    @Test
    void checkpointsStoreWeightsAsPublished() {
        ModelSpec oss = ModelTable.find("gpt-oss-120b");
        assertThat(oss.weightsLabel()).isEqualTo("bf16 + mxfp4 experts");
        // 36 x 128 experts x 3 x 2,880^2 at 4.25 bits, the rest bf16: the checkpoint's 60.8 GiB
        assertThat(oss.expertParameters()).isEqualTo(36L * 128 * 3 * 2880 * 2880);
        assertThat(oss.weightBytes() / (double) (1L << 30)).isCloseTo(60.8, within(0.2));
        assertThat(ModelTable.find("deepseek-v3").weights()).isEqualTo(Precision.FP8);
        assertThat(ModelTable.find("llama-3.1-8b").weightBytes()).isEqualTo(2 * ModelTable.find("llama-3.1-8b")
                .parameters());
    }

    @Test
    void findsNamesCaseInsensitivelyAndListsThemWhenUnknown() {
        assertThat(ModelTable.find(" Qwen3-8B ").name()).isEqualTo("qwen3-8b");
        assertThat(ModelTable.entries()).hasSize(11);
        assertThatThrownBy(() -> ModelTable.find("llama-2-7b"))
                .hasMessageStartingWith("--model llama-2-7b is not in the built-in table (llama-3.1-8b, ")
                .hasMessageEndingWith("gemma-3-27b); give its config.json with --config instead");
    }
}
