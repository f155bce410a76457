package io.kvtier.bench.limits;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonTest {
    @Test
    void parsesNestedObjectsNumbersBooleansAndNull() {
        Map<String, Object> parsed = Json.parseObject(
                " { \"a\" : 12, \"b\": -1.5e3, \"c\": true, \"d\": null, \"e\": {\"f\": \"x\"}, \"g\": {} } ");

        assertThat(parsed).containsEntry("a", 12L).containsEntry("b", -1500.0).containsEntry("c", true)
                .containsEntry("d", null).containsEntry("e", Map.of("f", "x")).containsEntry("g", Map.of());
    }

    @Test
    void quotedStringsSurviveARoundTrip() {
        String tricky = "say \"hi\"\\ \n\t\u0001 é";

        assertThat(Json.parseObject("{\"k\": " + Json.quote(tricky) + "}")).containsEntry("k", tricky);
    }

    @Test
    void rejectsMalformedInputWithItsOffset() {
        assertThatThrownBy(() -> Json.parseObject("{\"a\": 1,}")).hasMessageContaining("offset 8");
        assertThatThrownBy(() -> Json.parseObject("{\"a\": 1} x")).hasMessageContaining("trailing");
        assertThatThrownBy(() -> Json.parseObject("{\"a\": \"open")).hasMessageContaining("unterminated");
        assertThatThrownBy(() -> Json.parseObject("{\"a\": nope}")).hasMessageContaining("expected a value");
    }
}
