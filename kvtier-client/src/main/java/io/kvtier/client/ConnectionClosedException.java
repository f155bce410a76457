package io.kvtier.client;

/**
 * A command could not get its reply because its connection closed first: closed by the client, by the server, after
 * another command timed out, or after an I/O or protocol error (the cause). The command may or may not have been
 * executed; reconnect with {@link RespConnection#connect} to continue.
 */
public final class ConnectionClosedException extends RuntimeException {
    public ConnectionClosedException(String message, Throwable cause) {
        super(message, cause);
    }
}
