package io.kvtier.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class LmcacheSpecTest {

    /** 16-token chunks of 1 KiB, 40-token system prompt, turns of 8 + 16 tokens, context 200: fast to run. */
    static LmcacheSpec small() {
        return new LmcacheSpec("model-x", "", 16, 1024, 40, 1, 8, 1.0, 8, 16, 200, "metadata");
    }

    @Test
    void parametersAreListedForTheResultFile() {
        assertThat(small().parameters()).containsEntry("chunkBytes", "1 KiB").containsEntry("chunkTokens", "16")
                .containsEntry("probeSuffix", "metadata");
    }

    @Test
    void messagesNameTheFlagTheValueAndTheLimit() {
        assertThatThrownBy(() -> new LmcacheSpec("m", "", 0, 1024, 40, 1, 8, 1.0, 8, 16, 200, "metadata"))
                .hasMessage("--chunk-tokens 0 is below the minimum 1");
        assertThatThrownBy(() -> new LmcacheSpec("m", "", 16, 8, 40, 1, 8, 1.0, 8, 16, 200, "metadata"))
                .hasMessage("--chunk-bytes 8 B is below the minimum 16 B");
        assertThatThrownBy(() -> new LmcacheSpec("m", "", 16, 1024, 40, 1, 8, 1.0, 8, 16, 47, "metadata"))
                .hasMessage("--max-context-tokens 47 is below the minimum 48");
        assertThatThrownBy(() -> new LmcacheSpec("m", "", 16, 1024, 40, 1, 8, -1, 8, 16, 200, "metadata"))
                .hasMessage("--zipf -1.0 is below the minimum 0.0");
        assertThatThrownBy(() -> new LmcacheSpec("m@x", "", 16, 1024, 40, 1, 8, 1, 8, 16, 200, "metadata"))
                .hasMessage("--model 'm@x' must be non-empty and without '@'");
        assertThatThrownBy(() -> new LmcacheSpec("m", "", 16, 1024, 40, 1, 8, 1, 8, 16, 200, "kv"))
                .hasMessage("--probe-suffix 'kv' must be metadata or kv_bytes");
    }
}
