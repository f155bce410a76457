package io.kvtier.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonTest {
    @Test
    void writesObjectsInOrderIndentedAndReadsThemBack() {
        Map<String, Object> tree = Json.object("schema", "x/1", "seed", Long.MAX_VALUE, "ok", true, "none", null,
                "sizes", List.of(1, 2.5), "text", "a\"b\\c\n\u0001", "empty", Map.of());

        String text = Json.write(tree);

        assertThat(text).startsWith("{\n  \"schema\": \"x/1\",\n  \"seed\": 9223372036854775807,")
                .contains("\"text\": \"a\\\"b\\\\c\\n\\u0001\"").endsWith("}\n");
        assertThat(Json.parse(text)).isEqualTo(Json.object("schema", "x/1", "seed",
                new BigDecimal(Long.MAX_VALUE), "ok", true, "none", null, "sizes", List.of(BigDecimal.ONE,
                new BigDecimal("2.5")), "text", "a\"b\\c\n\u0001", "empty", Map.of()));
    }

    @Test
    void notANumberIsWrittenAsNull() {
        assertThat(Json.write(List.of(Double.NaN, Float.POSITIVE_INFINITY))).isEqualTo("[\n  null,\n  null\n]\n");
    }

    @Test
    void badInputIsRefused() {
        assertThatThrownBy(() -> Json.object("odd")).hasMessageContaining("name, value pairs");
        assertThatThrownBy(() -> Json.write(new Object())).hasMessageContaining("cannot write java.lang.Object");
        assertThatThrownBy(() -> Json.parse("{} x")).hasMessageContaining("trailing characters");
    }
}
