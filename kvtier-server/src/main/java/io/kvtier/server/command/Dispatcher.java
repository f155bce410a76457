package io.kvtier.server.command;

import io.kvtier.resp.RespCommand;
import io.kvtier.server.net.Reply;
import io.kvtier.store.IndexFullException;
import io.kvtier.store.KeyTooLongException;
import io.kvtier.store.StoreFullException;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Looks a decoded command up, checks authentication and arity, runs it, and turns failures into Redis error replies.
 * Stateless; called on event loops.
 */
public final class Dispatcher {
    private static final Logger log = LoggerFactory.getLogger(Dispatcher.class);

    private Dispatcher() {
    }

    /** Runs {@code cmd}; returns null when its reply is complete, else a future completing after the reply. */
    public static CompletableFuture<Void> dispatch(Session session, RespCommand cmd, Reply reply) {
        if (cmd.isSink(0)) { // a command name of 16 KiB or more: no such command, and its bytes may be on disk
            reply.error("ERR unknown command of " + cmd.length(0) + " bytes");
            return null;
        }
        long start = System.nanoTime();
        String name = Args.lower(cmd.bytes(0));
        CommandSpec spec = session.server.commands().lookup(name);
        if (spec == null) {
            reply.error(unknownCommand(cmd));
            return null;
        }
        if (!session.authenticated && !spec.allowedWithoutAuth()) {
            session.server.metrics().rejected(spec.name());
            reply.error("NOAUTH Authentication required.");
            return null;
        }
        if (!spec.subcommands().isEmpty()) {
            if (cmd.argCount() < 2) {
                reply.error("ERR wrong number of arguments for '" + spec.name() + "' command");
                return null;
            }
            CommandSpec sub = spec.subcommands().get(Args.lower(cmd.bytes(1)));
            if (sub == null) {
                reply.error("ERR unknown subcommand '" + trim(Args.quoted(cmd.bytes(1))) + "'. Try "
                        + spec.name().toUpperCase() + " HELP.");
                return null;
            }
            spec = sub;
        }
        if (spec.arity() > 0 ? cmd.argCount() != spec.arity() : cmd.argCount() < -spec.arity()) {
            session.server.metrics().rejected(spec.name());
            reply.error("ERR wrong number of arguments for '" + spec.name() + "' command");
            return null;
        }
        session.commandStarted(spec.name());
        session.server.commandsProcessed.increment();
        // A command failed if it wrote an error reply (INFO commandstats' failed_calls, as Redis counts them): the
        // connection runs one command at a time, so the replies written until it completes are its own.
        long errorsBefore = reply.errorReplies();
        CompletableFuture<Void> done = run(spec, session, cmd, reply);
        String metricName = spec.name();
        if (done == null) {
            session.server.metrics().command(metricName, reply.errorReplies() != errorsBefore,
                    System.nanoTime() - start);
            return null;
        }
        // Replies are event-loop confined: whichever thread completed the command, the error is written there.
        return done.handleAsync((v, e) -> {
            if (e != null) {
                reply.error(errorText(unwrap(e)));
            }
            session.server.metrics().command(metricName, reply.errorReplies() != errorsBefore,
                    System.nanoTime() - start);
            return null;
        }, reply.executor());
    }

    private static CompletableFuture<Void> run(CommandSpec spec, Session session, RespCommand cmd, Reply reply) {
        try {
            io.kvtier.server.cluster.ClusterNode cluster = session.server.cluster();
            if (cluster != null && ClusterRouter.routed(spec)) {
                return ClusterRouter.dispatch(cluster, spec, session, cmd, reply);
            }
            return spec.action().execute(session, cmd, reply);
        } catch (RuntimeException e) {
            reply.error(errorText(e));
            return null;
        }
    }

    static Throwable unwrap(Throwable e) {
        while ((e instanceof java.util.concurrent.CompletionException
                || e instanceof java.util.concurrent.ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }

    static String errorText(Throwable e) {
        if (e instanceof CommandException) {
            return e.getMessage();
        }
        if (e instanceof IndexFullException) {
            return "OOM command not allowed: " + e.getMessage(); // Redis's reply past maxmemory
        }
        if (e instanceof StoreFullException || e instanceof KeyTooLongException) {
            return "ERR " + e.getMessage();
        }
        log.error("command failed", e);
        return "ERR internal error: " + e;
    }

    static String unknownCommand(RespCommand cmd) {
        StringBuilder args = new StringBuilder();
        for (int i = 1; i < cmd.argCount() && args.length() < 128; i++) {
            // An argument of 16 KiB or more was streamed to a sink (maybe on disk); its first 128 bytes are all Redis
            // would echo, and a placeholder of the same kind is as useful.
            String a = cmd.isSink(i) ? "<" + cmd.length(i) + " bytes>" : Args.quoted(cmd.bytes(i));
            int room = 128 - args.length();
            args.append('\'').append(a, 0, Math.min(a.length(), room)).append("' ");
        }
        return "ERR unknown command '" + trim(Args.quoted(cmd.bytes(0))) + "', with args beginning with: " + args;
    }

    private static String trim(String s) {
        return s.length() > 128 ? s.substring(0, 128) : s;
    }
}
