package io.kvtier.kvcache.key;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.kvcache.key.LmcacheKey.Part;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** LMCache's key shapes, as its connectors write them, parse to their model, worker, hash and part. */
class LmcacheKeyTest {
    private static LmcacheKey parse(String key) {
        return LmcacheKey.parse(key.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void readsEngineKeysWithDtypeAndTheRedisConnectorsSuffixes() {
        String base = "meta-llama/Llama-3.1-8B-Instruct@2@1@7f3a9c0e12ab@bfloat16";

        assertThat(parse(base)).isEqualTo(new LmcacheKey("meta-llama/Llama-3.1-8B-Instruct", 1, "7f3a9c0e12ab",
                Part.CHUNK));
        assertThat(parse(base + "kv_bytes").part()).isEqualTo(Part.KV_BYTES);
        assertThat(parse(base + "metadata").part()).isEqualTo(Part.METADATA);
        assertThat(parse(base + "metadata").chunkHash()).isEqualTo("7f3a9c0e12ab");
        // The data of a chunk is in the whole key or its kv_bytes half; the metadata half and other keys hold none.
        assertThat(LmcacheKey.holdsChunkData(base.getBytes(StandardCharsets.UTF_8))).isTrue();
        assertThat(LmcacheKey.holdsChunkData((base + "kv_bytes").getBytes(StandardCharsets.UTF_8))).isTrue();
        assertThat(LmcacheKey.holdsChunkData((base + "metadata").getBytes(StandardCharsets.UTF_8))).isFalse();
        assertThat(LmcacheKey.holdsChunkData("user:1000".getBytes(StandardCharsets.UTF_8))).isFalse();
    }

    @Test
    void readsKeysWithoutDtypeWithTagsAndInTheOlderFormatFirstOrder() {
        assertThat(parse("mistral-7b@1@0@-123456789")).isEqualTo(new LmcacheKey("mistral-7b", 0, "-123456789",
                Part.CHUNK));
        assertThat(parse("qwen3-8b@4@3@abc@half@tenant%42kv_bytes"))
                .isEqualTo(new LmcacheKey("qwen3-8b", 3, "abc", Part.KV_BYTES));
        assertThat(parse("vllm@mistralai/Mistral-7B@1@0@9f00metadata"))
                .isEqualTo(new LmcacheKey("mistralai/Mistral-7B", 0, "9f00", Part.METADATA));
    }

    @Test
    void readsMultiprocessKeys() {
        assertThat(parse("Qwen/Qwen3-8B@0@00ff11ee")).isEqualTo(new LmcacheKey("Qwen/Qwen3-8B", 0, "00ff11ee",
                Part.CHUNK));
    }

    @Test
    void ignoresOtherKeys() {
        assertThat(parse("user:1000")).isNull();
        assertThat(parse("a@b@c@d")).isNull();
        assertThat(parse("@1@2@x")).isNull();
        assertThat(parse("model@1@2@")).isNull();
        assertThat(parse("kv_bytes")).isNull();
        assertThat(parse("m@1@0@h".repeat(200))).isNull();
    }

    @Test
    void pairsKvBytesWithMetadata() {
        byte[] kv = "m@1@0@h@bfloat16kv_bytes".getBytes(StandardCharsets.UTF_8);
        byte[] meta = "m@1@0@h@bfloat16metadata".getBytes(StandardCharsets.UTF_8);

        assertThat(LmcacheKey.companion(kv)).isEqualTo(meta);
        assertThat(LmcacheKey.companion(meta)).isEqualTo(kv);
        assertThat(LmcacheKey.companion("m@1@0@h@bfloat16".getBytes(StandardCharsets.UTF_8))).isNull();
        assertThat(LmcacheKey.companion("plain-metadata".getBytes(StandardCharsets.UTF_8))).isNull();
    }

    @Test
    void formatWritesWhatParseReads() {
        String kv = LmcacheKey.format("meta-llama/Llama-3.1-8B", 2, 1, "1a2b3c", "bfloat16", Part.KV_BYTES);
        assertThat(kv).isEqualTo("meta-llama/Llama-3.1-8B@2@1@1a2b3c@bfloat16kv_bytes");
        assertThat(LmcacheKey.parse(kv.getBytes(StandardCharsets.UTF_8)))
                .isEqualTo(new LmcacheKey("meta-llama/Llama-3.1-8B", 1, "1a2b3c", Part.KV_BYTES));
        String whole = LmcacheKey.format("m", 1, 0, "ff", "", Part.CHUNK);
        assertThat(LmcacheKey.parse(whole.getBytes(StandardCharsets.UTF_8)))
                .isEqualTo(new LmcacheKey("m", 0, "ff", Part.CHUNK));
        assertThatThrownBy(() -> LmcacheKey.format("a@b", 1, 0, "ff", "",
                Part.CHUNK)).isInstanceOf(IllegalArgumentException.class);
    }
}
