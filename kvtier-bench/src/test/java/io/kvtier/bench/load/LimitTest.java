package io.kvtier.bench.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class LimitTest {

    @Test
    void aRequestLimitAdmitsExactlyThatManyIndexes() {
        Limit limit = new Limit.Requests(3);
        assertThat(limit.admits(2, Long.MAX_VALUE)).isTrue();
        assertThat(limit.admits(3, 0)).isFalse();
        assertThat(limit.fraction(1, 0)).isCloseTo(1 / 3.0, org.assertj.core.data.Offset.offset(1e-9));
    }

    @Test
    void aTimedLimitAdmitsRequestsDueBeforeItsEnd() {
        Limit limit = new Limit.Timed(Duration.ofSeconds(2));
        assertThat(limit.admits(1_000_000, 1_999_999_999L)).isTrue();
        assertThat(limit.admits(0, 2_000_000_000L)).isFalse();
        assertThat(limit.fraction(0, 1_000_000_000L)).isEqualTo(0.5);
        assertThat(limit).hasToString("2s");
        assertThat(new Limit.Timed(Duration.ofMillis(1500))).hasToString("1500ms");
    }

    @Test
    void noneIsZeroRequests() {
        assertThat(Limit.none().isNone()).isTrue();
        assertThat(new Limit.Timed(Duration.ZERO).isNone()).isTrue();
        assertThat(new Limit.Requests(1).isNone()).isFalse();
    }
}
