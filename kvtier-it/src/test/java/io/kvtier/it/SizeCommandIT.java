package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.common.Json;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Runs the real {@code ./kvtier size} launcher as a process, as a person or a script would. */
class SizeCommandIT {
    private static Tools.Result size(String... flags) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(KvtierProcess.ROOT.resolve("kvtier").toString(),
                "size"));
        cmd.addAll(List.of(flags));
        return Tools.run(Duration.ofSeconds(60), null, cmd);
    }

    @Test
    void printsTheTableForLlama8b() throws Exception {
        Tools.Result r = size("--model", "llama-3.1-8b");
        assertThat(r.exitCode()).as(r.stderr()).isZero();
        assertThat(r.stdout()).contains("131,072 B (128 KiB) whole model")
                .contains("33,554,432 B (32 MiB) per worker")
                .contains("kvtier server --memory 128g --disk 1024g");
    }

    @Test
    @SuppressWarnings("unchecked")
    void jsonHasTheBytesPerTokenField() throws Exception {
        Tools.Result r = size("--model", "llama-3.1-8b", "--json");
        assertThat(r.exitCode()).as(r.stderr()).isZero();
        Map<String, Object> o = (Map<String, Object>) Json.parse(r.stdout());
        assertThat(o.get("bytes_per_token")).isEqualTo(new BigDecimal(131_072));
        assertThat(o.get("chunk_bytes")).isEqualTo(new BigDecimal(33_554_432));
        assertThat(o.get("max_sequences")).isEqualTo(new BigDecimal(53));
    }

    @Test
    void badInputExitsWith2AndOneLine() throws Exception {
        Tools.Result r = size("--model", "nope");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.stderr()).startsWith("kvtier: --model nope is not in the built-in table").hasLineCount(1);
    }
}
