package io.kvtier.server.command;

import io.kvtier.resp.RespCommand;
import io.kvtier.server.reply.Reply;
import java.util.concurrent.CompletableFuture;

/**
 * Runs one command. Returns null when the reply is complete, or a future that completes after an asynchronous reply
 * was written (on the reply's executor). Sinks the command keeps must be taken before returning.
 */
@FunctionalInterface
public interface CommandAction {
    CompletableFuture<Void> execute(Session session, RespCommand command, Reply reply);
}
