package io.kvtier.resp;

/**
 * A server reply that breaks the protocol or one of {@link RespReplyDecoder.Limits}. The position in the reply stream
 * is lost, so the connection must be closed; reconnect to continue (raise the limit named in the message if the
 * server is right).
 */
public final class RespReplyException extends RuntimeException {
    public RespReplyException(String message) {
        super(message);
    }
}
