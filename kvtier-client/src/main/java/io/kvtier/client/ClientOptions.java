package io.kvtier.client;

import java.time.Duration;

/**
 * How a {@link RespConnection} waits: for the TCP connection to be established, and for each command's reply.
 *
 * @param connectTimeout longest wait for a connection, positive
 * @param commandTimeout longest wait for a reply, counted from {@link RespConnection#send}, positive
 */
public record ClientOptions(Duration connectTimeout, Duration commandTimeout) {
    public ClientOptions {
        requirePositive("connectTimeout", connectTimeout);
        requirePositive("commandTimeout", commandTimeout);
    }

    /** 2 s to connect, 30 s per command. */
    public static ClientOptions defaults() {
        return new ClientOptions(Duration.ofSeconds(2), Duration.ofSeconds(30));
    }

    private static void requirePositive(String name, Duration value) {
        if (value == null) {
            throw new IllegalArgumentException(name + " is required");
        }
        if (value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(name + " " + value + " must be positive");
        }
    }
}
