package io.kvtier.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class DurationsTest {
    @Test
    void aNumberWithAUnitAndABareNumberOfSeconds() {
        assertThat(Durations.parse("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(Durations.parse("2s")).isEqualTo(Duration.ofSeconds(2));
        assertThat(Durations.parse("2")).isEqualTo(Duration.ofSeconds(2));
        assertThat(Durations.parse(" 5 M ")).isEqualTo(Duration.ofMinutes(5));
        assertThat(Durations.parse("1h")).isEqualTo(Duration.ofHours(1));
        assertThat(Durations.parse("0")).isZero();
    }

    @Test
    void anythingElseIsRefusedWithTheGrammar() {
        for (String bad : new String[] {"", "s", "1.5s", "-1s", "2d", "2 sec"}) {
            assertThatThrownBy(() -> Durations.parse(bad)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("'" + bad + "' is not a duration (examples: 500ms, 2s, 5m, 1h; a bare number is "
                            + "seconds)");
        }
        assertThatThrownBy(() -> Durations.parse("99999999999999999999h")).hasMessageContaining("too large");
        assertThatThrownBy(() -> Durations.parse("9223372036854775807h")).hasMessageContaining("too large");
    }
}
