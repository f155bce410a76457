package io.kvtier.server.reply;

/** A command failed in a way the client is told about; the message is the full Redis error, e.g. "ERR syntax error". */
public final class CommandException extends RuntimeException {
    public static final String SYNTAX = "ERR syntax error";
    public static final String NOT_INTEGER = "ERR value is not an integer or out of range";

    public CommandException(String redisError) {
        super(redisError, null, false, false);
    }
}
