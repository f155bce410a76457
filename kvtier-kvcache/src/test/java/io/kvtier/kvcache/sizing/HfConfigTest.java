package io.kvtier.kvcache.sizing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reads the published config.json files under src/test/resources (copies of Hugging Face's). */
class HfConfigTest {
    @TempDir
    Path tmp;

    private static String fixture(String name) throws IOException {
        try (InputStream in = HfConfigTest.class.getResourceAsStream(name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static ModelSpec parse(String fixture) throws IOException {
        return HfConfig.parse(fixture(fixture), fixture, fixture);
    }

    @Test
    void llamaConfigDerivesHeadDimFromHiddenSize() throws IOException {
        ModelSpec m = parse("llama-3.1-8b-instruct.json");
        assertThat(m.attention()).isEqualTo(Attention.full(32, 32, 8, 128));
        assertThat(m.dtype()).isEqualTo(Precision.BF16);
        assertThat(m).usingRecursiveComparison().ignoringFields("name", "source")
                .isEqualTo(ModelTable.find("llama-3.1-8b"));
    }

    @Test
    void gemma3ReadsTextConfigAndDefaultsToFiveLocalLayersPerGlobal() throws IOException {
        ModelSpec m = parse("gemma-3-27b-it.json");
        assertThat(m.attention()).isEqualTo(new Attention(62, 32, 16, 128, 0, 1024, 52));
        assertThat(m.dtype()).isEqualTo(Precision.BF16);                 // from the top level, beside text_config
        assertThat(m.parameters()).isEqualTo(ModelTable.find("gemma-3-27b").parameters());
    }

    @Test
    void deepSeekIsMlaWithFp8Weights() throws IOException {
        ModelSpec m = parse("deepseek-v3.json");
        assertThat(m.attention().isMla()).isTrue();
        assertThat(m.attention().mlaLatentDim()).isEqualTo(576);
        assertThat(KvFootprint.of(m, m.dtype(), 1).bytesPerToken()).isEqualTo(70_272);
        assertThat(m.weights()).isEqualTo(Precision.FP8);
        assertThat(m.parameters()).isBetween(670_000_000_000L, 672_000_000_000L);
    }

    @Test
    void gptOssCountsSlidingLayersFromLayerTypes() throws IOException {
        ModelSpec m = parse("gpt-oss-120b.json");
        assertThat(m.attention()).isEqualTo(new Attention(36, 64, 8, 64, 0, 128, 18));
        assertThat(m.expertWeights()).isEqualTo(Precision.MXFP4);
        assertThat(m.weights()).isEqualTo(Precision.BF16);
    }

    @Test
    void useSlidingWindowFalseMeansFullAttention() throws IOException {
        ModelSpec m = parse("qwen2.5-7b-instruct.json");               // sliding_window 131072, switched off
        assertThat(m.attention()).isEqualTo(Attention.full(28, 28, 4, 128));
        assertThat(KvFootprint.of(m, m.dtype(), 1).bytesPerToken()).isEqualTo(57_344);
    }

    @Test
    void aWindowWithoutLayerTypesSlidesEveryLayer() throws IOException {
        ModelSpec m = parse("mistral-7b-v0.1.json");
        assertThat(m.attention()).isEqualTo(new Attention(32, 32, 8, 128, 0, 4096, 32));
        assertThat(KvFootprint.of(m, m.dtype(), 1).workerSequenceBytes(8192, true)).isEqualTo(131_072L * 4096);
    }

    @Test
    void missingOrBadFieldsAreNamed() throws IOException {
        String llama = fixture("llama-3.1-8b-instruct.json");
        assertThatThrownBy(() -> HfConfig.parse(llama.replace("\"num_hidden_layers\": 32,", ""), "x", "c.json"))
                .hasMessage("c.json: num_hidden_layers: missing");
        assertThatThrownBy(() -> HfConfig.parse(llama.replace("\"vocab_size\": 128256", "\"vocab_size\": \"big\""),
                "x", "c.json")).hasMessage("c.json: vocab_size: '\"big\"' is not a whole number");
        assertThatThrownBy(() -> HfConfig.parse(llama.replace("\"torch_dtype\": \"bfloat16\"",
                "\"torch_dtype\": \"int3\""), "x", "c.json")).hasMessageStartingWith("c.json: torch_dtype: 'int3'");
        String oss = fixture("gpt-oss-120b.json").replace("\"num_hidden_layers\": 36", "\"num_hidden_layers\": 30");
        assertThatThrownBy(() -> HfConfig.parse(oss, "x", "c.json"))
                .hasMessage("c.json: layer_types: expected a list of 30 layer types");
        assertThatThrownBy(() -> HfConfig.parse("{\"a\": ", "x", "c.json")).hasMessageStartingWith("c.json is not "
                + "JSON");
        assertThatThrownBy(() -> HfConfig.parse("[1]", "x", "c.json")).hasMessage("c.json is not a JSON object");
    }

    @Test
    void readsAFileAndNamesTheModelAfterItsDirectory() throws IOException {
        Path dir = Files.createDirectories(tmp.resolve("Llama-3.1-8B-Instruct"));
        Files.writeString(dir.resolve("config.json"), fixture("llama-3.1-8b-instruct.json"));
        assertThat(HfConfig.read(dir.resolve("config.json")).name()).isEqualTo("Llama-3.1-8B-Instruct");
        assertThatThrownBy(() -> HfConfig.read(tmp.resolve("none.json")))
                .hasMessage("--config " + tmp.resolve("none.json") + ": no such file");
    }
}
