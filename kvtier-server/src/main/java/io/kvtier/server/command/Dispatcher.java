package io.kvtier.server.command;

import io.kvtier.cluster.error.ClusterException;
import io.kvtier.resp.RespCommand;
import io.kvtier.server.reply.CommandException;
import io.kvtier.server.reply.Reply;
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

    /**
     * Runs {@code cmd} (or, inside MULTI, queues it); returns null when its reply is complete, else a future completing
     * after the reply. A keyed command holds its keys' {@link KeyGate} stripes shared while it runs.
     */
    public static CompletableFuture<Void> dispatch(Session session, RespCommand cmd, Reply reply) {
        return dispatch(session, cmd, reply, System.nanoTime());
    }

    /** As {@link #dispatch(Session, RespCommand, Reply)}, for a command whose handling started at {@code startNanos}. */
    public static CompletableFuture<Void> dispatch(Session session, RespCommand cmd, Reply reply, long startNanos) {
        CommandSpec spec = resolve(session, cmd, reply);
        if (spec == null) {
            if (session.transaction != null) {
                session.transaction.fail(); // Redis: a command refused while queuing aborts the transaction
            }
            return null;
        }
        // CLIENT LIST's cmd and idle: the client's own last command, queued or run, as Redis; not the commands EXEC
        // or a script runs for it.
        session.commandStarted(spec.name(), startNanos);
        if (session.transaction != null && !Transactions.runsWhileQueuing(spec)) {
            Transactions.queue(session, spec, cmd, reply);
            return null;
        }
        byte[][] keys = keysOf(spec, cmd);
        if (keys.length == 0) {
            return run(spec, session, cmd, reply, true, startNanos);
        }
        return withKeysShared(session, keys, cmd, reply, c -> run(spec, session, c, reply, true, startNanos));
    }

    /**
     * Runs {@code body} on {@code cmd} holding the {@link KeyGate} stripes of {@code keys} shared, waiting first if a
     * transaction or script holds one (then {@code body} gets a copy of {@code cmd} that owns its arguments).
     */
    static CompletableFuture<Void> withKeysShared(Session session, byte[][] keys, RespCommand cmd, Reply reply,
                                                  java.util.function.Function<RespCommand, CompletableFuture<Void>>
                                                          body) {
        KeyGate gate = session.server.keyGate();
        int[] stripes = KeyGate.stripesOf(keys);
        CompletableFuture<Void> entered = gate.enterShared(stripes);
        if (entered == null) {
            // Entered at once, the common case: as Async.andFinally, inline (its two lambdas cost two allocations on
            // every keyed command).
            CompletableFuture<Void> done;
            try {
                done = body.apply(cmd);
            } catch (RuntimeException e) {
                gate.leaveShared(stripes);
                throw e;
            }
            if (done == null) {
                gate.leaveShared(stripes);
                return null;
            }
            return done.whenComplete((v, e) -> gate.leaveShared(stripes));
        }
        RespCommand own = cmd.take(ClusterRouter.allIndexes(cmd));
        return Async.then(entered, reply, v -> Async.andFinally(() -> body.apply(own), () -> {
            gate.leaveShared(stripes);
            own.release();
        }));
    }

    /**
     * Runs {@code cmd} for a caller that already holds its keys exclusively in the {@link KeyGate} (a script): as
     * {@link #dispatch}, without queuing or the gate.
     */
    public static CompletableFuture<Void> dispatchHeld(Session session, RespCommand cmd, Reply reply) {
        CommandSpec spec = resolve(session, cmd, reply);
        return spec == null ? null : run(spec, session, cmd, reply, true);
    }

    /** The keys {@code cmd} names, by its spec's key positions. */
    static byte[][] keysOf(CommandSpec spec, RespCommand cmd) {
        int[] idx = ClusterRouter.keyIndexes(spec, cmd);
        byte[][] keys = new byte[idx.length][];
        for (int i = 0; i < idx.length; i++) {
            keys[i] = cmd.bytes(idx[i]);
        }
        return keys;
    }

    /**
     * Looks {@code cmd} up and checks authentication, subcommand and arity; returns its spec, or null after writing
     * the error reply.
     */
    static CommandSpec resolve(Session session, RespCommand cmd, Reply reply) {
        if (cmd.isSink(0)) { // a command name of 16 KiB or more: no such command, and its bytes may be on disk
            reply.error("ERR unknown command of " + cmd.length(0) + " bytes");
            return null;
        }
        CommandSpec spec = session.server.commands().lookup(cmd.bytes(0));
        if (spec == null) {
            reply.error(unknownCommand(cmd));
            return null;
        }
        if (!session.authenticated && !spec.allowedWithoutAuth()) {
            refuse(session, spec, reply, "NOAUTH Authentication required.");
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
        if (!spec.acceptsArgCount(cmd.argCount())) {
            refuse(session, spec, reply, "ERR wrong number of arguments for '" + spec.name() + "' command");
            return null;
        }
        if (!spec.allowedWhileLoading() && joining(session)) {
            refuse(session, spec, reply, "LOADING kvtier is joining its cluster");
            return null;
        }
        return spec;
    }

    /**
     * Whether this is a cluster node that has not served a slot table yet (from the moment its port is bound, before
     * its cluster node even exists): it may hold stale data and knows no owners, so it answers -LOADING, as Redis does
     * while it loads, which clients retry.
     */
    private static boolean joining(Session session) {
        if (session.server.options().cluster() == null) {
            return false;
        }
        io.kvtier.cluster.node.ClusterNode node = session.server.cluster();
        return node == null || !node.joined();
    }

    /** Answers {@code error} for a command refused before running; a refused EXEC also ends the transaction. */
    private static void refuse(Session session, CommandSpec spec, Reply reply, String error) {
        session.server.metrics().rejected(spec.name()); // INFO commandstats' rejected_calls
        if (spec.name().equals("exec")) { // Redis answers so even outside MULTI
            session.discardTransaction();
            reply.error("EXECABORT Transaction discarded because of: "
                    + (error.startsWith("ERR ") ? error.substring(4) : error));
            return;
        }
        reply.error(error);
    }

    /**
     * Runs a resolved command, counting and timing it; {@code routed}: through the cluster's routing (false inside a
     * transaction, which EXEC routed as a whole). The returned future never fails: failures become error replies.
     */
    static CompletableFuture<Void> run(CommandSpec spec, Session session, RespCommand cmd, Reply reply,
                                       boolean routed) {
        return run(spec, session, cmd, reply, routed, System.nanoTime());
    }

    /** As above, timed from {@code start} (System.nanoTime()). */
    private static CompletableFuture<Void> run(CommandSpec spec, Session session, RespCommand cmd, Reply reply,
                                               boolean routed, long start) {
        session.server.commandsProcessed.increment();
        // A command failed if it wrote an error reply (INFO commandstats' failed_calls, as Redis counts them): the
        // connection runs one command at a time, so the replies written until it completes are its own, less those
        // a command it ran (one queued in MULTI) counted as its own.
        long errorsBefore = reply.errorReplies();
        CompletableFuture<Void> done = execute(spec, session, cmd, reply, routed);
        String metricName = spec.name();
        if (done == null) {
            session.server.metrics().command(metricName, reply.newErrorsSince(errorsBefore),
                    System.nanoTime() - start);
            return null;
        }
        // Replies are event-loop confined: whichever thread completed the command, the error is written there.
        return done.handleAsync((v, e) -> {
            if (e != null) {
                reply.error(errorText(unwrap(e)));
            }
            session.server.metrics().command(metricName, reply.newErrorsSince(errorsBefore),
                    System.nanoTime() - start);
            return null;
        }, reply.executor());
    }

    private static CompletableFuture<Void> execute(CommandSpec spec, Session session, RespCommand cmd, Reply reply,
                                                   boolean routed) {
        try {
            io.kvtier.cluster.node.ClusterNode cluster = session.server.cluster();
            if (routed && cluster != null && ClusterRouter.routed(spec)) {
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

    /** The Redis error reply for a failure: the one place typed failures (the cluster's too) become error text. */
    static String errorText(Throwable e) {
        if (e instanceof CommandException) {
            return e.getMessage();
        }
        if (e instanceof ClusterException c) { // MOVED, TRYAGAIN, CLUSTERDOWN, CROSSSLOT, UNREPLICATED, UNREACHABLE
            return c.redisError();
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
