package io.kvtier.client;

import java.time.Duration;

/**
 * A command got no reply within {@link ClientOptions#commandTimeout()}. Its connection is closed, since the position
 * in the reply stream is lost; reconnect, and raise the timeout if the server is merely slow.
 */
public final class RespTimeoutException extends RuntimeException {
    private final Duration timeout;

    public RespTimeoutException(String remote, Duration timeout) {
        super("no reply from " + remote + " within " + timeout + "; the connection was closed: reconnect, and raise"
                + " ClientOptions.commandTimeout if the server is merely slow");
        this.timeout = timeout;
    }

    /** The command timeout that expired. */
    public Duration timeout() {
        return timeout;
    }
}
