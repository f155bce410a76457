package io.kvtier.events;

/** An event payload that is not a KV event batch in any of vLLM's layouts; the message says where it went wrong. */
public final class MalformedEventException extends Exception {
    public MalformedEventException(String message) {
        super(message);
    }

    public MalformedEventException(String message, Throwable cause) {
        super(message, cause);
    }
}
