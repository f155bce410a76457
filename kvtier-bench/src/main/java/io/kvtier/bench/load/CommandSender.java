package io.kvtier.bench.load;

import io.kvtier.client.Reply;
import io.kvtier.client.RespConnection;
import java.util.concurrent.CompletableFuture;

/**
 * Where a lane's commands go: one connection, or a cluster client that picks the connection of the key's primary.
 * Implementations are thread-safe; their futures complete on I/O or timer threads, so callbacks must not block.
 */
public interface CommandSender {
    /**
     * Sends {@code args} (the command name first), whose key is {@code key}. Takes ownership of ByteBuf arguments as
     * {@link RespConnection#send} does, even when it throws. An error reply completes the future normally.
     */
    CompletableFuture<Reply> send(byte[] key, Object... args);

    /** False once nothing more can be sent: a plain connection that closed. A cluster client reconnects instead. */
    boolean isOpen();

    /** Every command on {@code connection}, whatever its key. */
    static CommandSender of(RespConnection connection) {
        return new CommandSender() {
            @Override
            public CompletableFuture<Reply> send(byte[] key, Object... args) {
                return connection.send(args);
            }

            @Override
            public boolean isOpen() {
                return connection.isOpen();
            }
        };
    }
}
