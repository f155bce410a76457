package io.kvtier.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class ClientOptionsTest {
    @Test
    void defaultsToTwoSecondsToConnectAndThirtyPerCommand() {
        assertThat(ClientOptions.defaults())
                .isEqualTo(new ClientOptions(Duration.ofSeconds(2), Duration.ofSeconds(30)));
    }

    @Test
    void refusesMissingTimeouts() {
        assertThatThrownBy(() -> new ClientOptions(null, Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("connectTimeout is required");
        assertThatThrownBy(() -> new ClientOptions(Duration.ofSeconds(1), null))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("commandTimeout is required");
    }

    @Test
    void refusesTimeoutsThatAreNotPositive() {
        assertThatThrownBy(() -> new ClientOptions(Duration.ZERO, Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("connectTimeout PT0S must be positive");
        assertThatThrownBy(() -> new ClientOptions(Duration.ofSeconds(1), Duration.ofMillis(-5)))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("commandTimeout PT-0.005S must be positive");
    }
}
