package io.kvtier.router.tokens;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.common.Json;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A tokenizer.json made and encoded by Hugging Face's tokenizers library in Python (src/test/python/make_tokenizer.py)
 * gives the same ids here, with and without its special tokens.
 */
class TokenizerTest {
    private static final Path DIR = Path.of("src/test/resources/tokenizer");

    private static int[] ids(Object json) {
        return ((List<?>) json).stream().mapToInt(o -> ((BigDecimal) o).intValueExact()).toArray();
    }

    @Test
    void encodesAsTheTokenizersLibraryDoes() throws Exception {
        Tokenizer tokenizer = Tokenizer.load(DIR);
        int checked = 0;
        for (String line : Files.readAllLines(DIR.resolve("expected.txt"), StandardCharsets.UTF_8)) {
            if (line.startsWith("#") || line.isBlank()) {
                continue;
            }
            String[] f = line.split("\t");
            String text = (String) Json.parse(f[0]);
            assertThat(tokenizer.encode(text, true)).as(text).containsExactly(ids(Json.parse(f[1])));
            assertThat(tokenizer.encode(text, false)).as(text).containsExactly(ids(Json.parse(f[2])));
            checked++;
        }
        assertThat(checked).isEqualTo(4);
        assertThat(Tokenizer.load(DIR.resolve("tokenizer.json")).encode("You are a helpful assistant."))
                .startsWith(0);
    }

    @Test
    void saysWhereNoTokenizerIs() {
        assertThatThrownBy(() -> Tokenizer.load(Path.of("src/test/resources")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no tokenizer.json");
    }
}
