package io.kvtier.cli.sizing;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.cli.Main;
import io.kvtier.common.Json;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Runs {@code kvtier size} through the real command line, capturing stdout, stderr and the exit code. */
class SizeCommandTest {
    @TempDir
    Path tmp;

    private record Run(int exitCode, String stdout, String stderr) {
    }

    private static Run run(String... args) {
        PrintStream out = System.out;
        PrintStream err = System.err;
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(o, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(e, true, StandardCharsets.UTF_8));
            int code = Main.commandLine().execute(args);
            return new Run(code, o.toString(StandardCharsets.UTF_8), e.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(out);
            System.setErr(err);
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> json(String... args) {
        Run r = run(args);
        assertThat(r.exitCode()).as(r.stderr()).isZero();
        return (Map<String, Object>) Json.parse(r.stdout());
    }

    private static long number(Map<String, Object> o, String... path) {
        Object v = o;
        for (String p : path) {
            v = ((Map<?, ?>) v).get(p);
        }
        return ((BigDecimal) v).longValueExact();
    }

    @Test
    void printsTheTableForLlama8b() {
        Run r = run("size", "--model", "llama-3.1-8b");
        assertThat(r.exitCode()).as(r.stderr()).isZero();
        assertThat(r.stdout()).startsWith("kvtier size: llama-3.1-8b, KV cache bf16, tensor parallel 1, LMCache "
                + "chunks of 256 tokens, context 8,192 tokens\n")
                .contains("  KV per token   131,072 B (128 KiB) whole model, 131,072 B (128 KiB) per GPU\n")
                .contains("  LMCache chunk  33,554,432 B (32 MiB) per worker; 1 worker\n")
                .contains("  max sequences  53 sequences of 8,192 tokens in 1 instance of 1 GPU\n")
                .containsPattern("  DRAM +128 GiB +1,048,576 +4,096 +128\n")
                .contains("  kvtier         kvtier server --memory 128g --disk 1024g\n");
    }

    @Test
    void jsonCarriesTheFiguresAsIntegers() {
        Map<String, Object> o = json("size", "--model", "llama-3.1-8b", "--json");
        assertThat(o.get("model")).isEqualTo("llama-3.1-8b");
        assertThat(number(o, "bytes_per_token")).isEqualTo(131_072);
        assertThat(number(o, "chunk_bytes")).isEqualTo(33_554_432);
        assertThat(number(o, "max_sequences")).isEqualTo(53);
        assertThat(number(o, "tiers", "dram", "tokens")).isEqualTo(1_048_576);
        assertThat(number(o, "gpu", "weights_bytes")).isEqualTo(2 * 8_029_995_008L);
        assertThat(((Map<?, ?>) o.get("suggested")).get("flags")).isEqualTo("--memory 128g --disk 1024g");
    }

    @Test
    void everyFlagReachesTheReport() {
        Map<String, Object> o = json("size", "--model", "Llama-3.1-70B", "--tp", "4", "--gpus", "8", "--dtype", "fp8",
                "--gpu-hbm", "141g", "--gpu-memory-utilization", "0.95", "--activation-reserve", "6g", "--dram",
                "512g", "--ssd", "4t", "--context", "32k", "--chunk-tokens", "512", "--weights-dtype", "fp8",
                "--target-sequences", "100", "--json");
        assertThat(number(o, "bytes_per_token")).isEqualTo(163_840);           // fp8
        assertThat(number(o, "bytes_per_token_per_gpu")).isEqualTo(40_960);
        assertThat(number(o, "chunk_bytes")).isEqualTo(40_960L * 512);
        assertThat(number(o, "context_tokens")).isEqualTo(32_768);
        assertThat(number(o, "gpu", "instances")).isEqualTo(2);
        assertThat(number(o, "gpu", "activation_reserve_bytes")).isEqualTo(6L << 30);
        assertThat(number(o, "tiers", "ssd", "bytes")).isEqualTo(4L << 40);
        // 100 sequences x 64 chunks x 4 workers x 20 MiB = 500 GiB
        assertThat(number(o, "suggested", "bytes")).isEqualTo(500L << 30);
        assertThat(((Map<?, ?>) o.get("suggested")).get("flags")).isEqualTo("--memory 500g --disk 500g");
    }

    @Test
    void readsAHuggingFaceConfig() throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("my-model"));
        Files.writeString(dir.resolve("config.json"), """
                {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
                 "num_hidden_layers": 32, "num_key_value_heads": 8, "vocab_size": 128256,
                 "tie_word_embeddings": false, "torch_dtype": "bfloat16"}
                """);
        Map<String, Object> o = json("size", "--config", dir.resolve("config.json").toString(), "--json");
        assertThat(o.get("model")).isEqualTo("my-model");
        assertThat(number(o, "bytes_per_token")).isEqualTo(131_072);
    }

    @Test
    void listsTheBuiltInModels() {
        Run r = run("size", "--list");
        assertThat(r.exitCode()).isZero();
        assertThat(r.stdout().lines()).hasSize(12);
        assertThat(r.stdout()).containsPattern("deepseek-v3 +deepseek-ai/DeepSeek-V3 +671B \\(37B active\\) +70,272");
    }

    @Test
    void badInputIsExitCode2AndOneLine() {
        String[][] cases = {
            {"size"}, {"size", "--model", "gpt-5"}, {"size", "--model", "llama-3.1-8b", "--tp", "3"},
            {"size", "--model", "llama-3.1-8b", "--dram", "lots"}, {"size", "--model", "llama-3.1-8b", "--dtype",
                "int4"}, {"size", "--model", "llama-3.1-8b", "--activation-reserve", "1.5"},
            {"size", "--config", "/nonexistent/config.json"}, {"size", "--model", "llama-3.1-8b", "--context", "0"},
        };
        String[] expected = {
            "kvtier: give --model NAME (--list shows them) or --config FILE\n",
            "kvtier: --model gpt-5 is not in the built-in table (",
            "kvtier: --tp 3 does not divide the model's 32 attention heads\n",
            "kvtier: --dram: 'lots' is not a size (examples: 1048576, 64m, 2g, 512MiB)\n",
            "kvtier: --dtype int4 is not a KV-cache dtype (bf16, fp16, fp8, fp32)\n",
            "kvtier: --activation-reserve 1.5 is a fraction outside [0, 1) of --gpu-hbm\n",
            "kvtier: --config /nonexistent/config.json: no such file\n",
            "kvtier: --context 0 is below the minimum 1\n",
        };
        for (int i = 0; i < cases.length; i++) {
            Run r = run(cases[i]);
            assertThat(r.exitCode()).as(String.join(" ", cases[i])).isEqualTo(2);
            assertThat(r.stdout()).isEmpty();
            assertThat(r.stderr()).startsWith(expected[i]).hasLineCount(1);
        }
    }
}
