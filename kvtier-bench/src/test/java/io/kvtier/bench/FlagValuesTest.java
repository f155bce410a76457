package io.kvtier.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.bench.load.Limit;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class FlagValuesTest {
    @Test
    void durationsTakeUnitsAndABareNumberIsSeconds() {
        assertThat(FlagValues.duration("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(FlagValues.duration("10s")).isEqualTo(Duration.ofSeconds(10));
        assertThat(FlagValues.duration("2m")).isEqualTo(Duration.ofMinutes(2));
        assertThat(FlagValues.duration("1h")).isEqualTo(Duration.ofHours(1));
        assertThat(FlagValues.duration("7")).isEqualTo(Duration.ofSeconds(7));
        assertThatThrownBy(() -> FlagValues.duration("soon")).hasMessageContaining("'soon' is not a duration");
    }

    @Test
    void aWarmUpIsADurationOrARequestCount() {
        assertThat(FlagValues.warmUp("2s")).isEqualTo(new Limit.Timed(Duration.ofSeconds(2)));
        assertThat(FlagValues.warmUp("200")).isEqualTo(new Limit.Requests(200));
        assertThat(FlagValues.warmUp("0").isNone()).isTrue();
        assertThatThrownBy(() -> FlagValues.warmUp("2x")).hasMessageContaining("'2x' is not a duration");
        assertThatThrownBy(() -> FlagValues.warmUp("-1")).hasMessageContaining("neither a duration");
    }
}
