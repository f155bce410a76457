package io.kvtier.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class LmcacheKeysTest {

    @Test
    void keysHaveLmcachesShapeWithTheSuffixAppendedDirectly() {
        String chunk = LmcacheKeys.chunkKey("meta-llama/Meta-Llama-3-8B-Instruct", 0x00ab_cdefL, "");
        assertThat(chunk).isEqualTo("meta-llama/Meta-Llama-3-8B-Instruct@1@0@abcdef");
        assertThat(new String(LmcacheKeys.withSuffix(chunk, LmcacheKeys.KV_BYTES), StandardCharsets.UTF_8))
                .isEqualTo("meta-llama/Meta-Llama-3-8B-Instruct@1@0@abcdefkv_bytes");
        assertThat(new String(LmcacheKeys.withSuffix(chunk, LmcacheKeys.METADATA), StandardCharsets.UTF_8))
                .isEqualTo("meta-llama/Meta-Llama-3-8B-Instruct@1@0@abcdefmetadata");
    }

    @Test
    void negativeHashesPrintAsUnsignedHexAndADtypeIsAppended() {
        assertThat(LmcacheKeys.chunkKey("m", -1L, "bfloat16")).isEqualTo("m@1@0@ffffffffffffffff@bfloat16");
    }

    @Test
    void everyKeyOfATrafficStreamMatchesTheShape() {
        LmcacheSpec spec = LmcacheSpecTest.small();
        ChatTraffic traffic = new ChatTraffic(spec, 3);
        for (int i = 0; i < 50; i++) {
            for (String key : traffic.next().chunkKeys()) {
                assertThat(key).matches("model-x@1@0@[0-9a-f]{1,16}");
            }
        }
    }
}
