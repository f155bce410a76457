package io.kvtier.resp;

/**
 * A protocol violation; {@link #getMessage()} is the exact Redis error text without the leading '-', e.g.
 * {@code "ERR Protocol error: invalid bulk length"}. The connection that caused it must be answered and closed.
 */
public final class RespException extends RuntimeException {
    public RespException(String redisError) {
        super(redisError, null, false, false);
    }
}
