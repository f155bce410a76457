package io.kvtier.server.command;

import static io.kvtier.server.command.CommandSpec.container;
import static io.kvtier.server.command.CommandSpec.of;

import io.kvtier.cluster.node.ClusterNode;
import io.kvtier.resp.RespCommand;
import io.kvtier.resp.RespReplyDecoder;
import io.kvtier.server.reply.CommandException;
import io.kvtier.server.reply.Reply;
import io.kvtier.server.script.LuaReplies;
import io.kvtier.server.script.ScriptRun;
import io.kvtier.server.script.ScriptFlags;
import io.kvtier.server.script.Scripting;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.EventLoop;
import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.Supplier;
import org.luaj.vm2.LuaTable;
import org.luaj.vm2.LuaValue;
import org.luaj.vm2.Prototype;

/**
 * EVAL, EVALSHA, their _RO forms and SCRIPT LOAD/EXISTS/FLUSH/KILL. A script runs on a script thread (see
 * {@link Scripting}), never on an event loop, holding its declared KEYS exclusively ({@link KeyGate}) for the whole
 * run, so that no other client's command on them runs in between: the atomicity Redis gets from running one thing at
 * a time. Each redis.call runs the real command on the client's event loop against a capturing {@link Reply} and
 * hands the reply back to Lua. A script may only touch the keys it declares; it may call the string and keyspace
 * commands on keys, and PING, ECHO, TIME and DBSIZE. In a cluster it runs on the primary of its keys' slot as one
 * write: under its keys' locks, their state replicated afterwards ({@link ClusterRouter#checkScript}).
 */
final class ScriptCommands {
    private static final String NOSCRIPT = "NOSCRIPT No matching script. Please use EVAL.";
    private static final Set<String> KEYLESS_ALLOWED = Set.of("ping", "echo", "time", "dbsize");

    private ScriptCommands() {
    }

    static List<CommandSpec> specs() {
        String flags = "noscript stale skip_monitor may_replicate no_mandatory_keys movablekeys";
        String readOnlyFlags = "readonly noscript stale skip_monitor no_mandatory_keys movablekeys";
        return List.of(
                of("eval", -3, flags, 0, 0, 0, (s, c, r) -> eval(s, c, r, false, false)),
                of("evalsha", -3, flags, 0, 0, 0, (s, c, r) -> eval(s, c, r, true, false)),
                of("eval_ro", -3, readOnlyFlags, 0, 0, 0, (s, c, r) -> eval(s, c, r, false, true)),
                of("evalsha_ro", -3, readOnlyFlags, 0, 0, 0, (s, c, r) -> eval(s, c, r, true, true)),
                container("script", -2,
                        of("script|load", 3, "noscript stale", 0, 0, 0, ScriptCommands::load),
                        of("script|exists", -3, "noscript stale", 0, 0, 0, (s, c, r) -> {
                            r.array(c.argCount() - 2);
                            for (int i = 2; i < c.argCount(); i++) {
                                r.integer(s.server.scripting().cache().contains(Args.lower(c.bytes(i))) ? 1 : 0);
                            }
                            return null;
                        }),
                        of("script|flush", -2, "noscript may_replicate allow_busy", 0, 0, 0, (s, c, r) -> {
                            if (c.argCount() > 3 || c.argCount() == 3 && !Args.is(c.bytes(2), "async")
                                    && !Args.is(c.bytes(2), "sync")) {
                                throw new CommandException("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
                            }
                            s.server.scripting().cache().clear();
                            r.ok();
                            return null;
                        }),
                        of("script|kill", 2, "noscript allow_busy", 0, 0, 0, (s, c, r) -> {
                            s.server.scripting().kill();
                            r.ok();
                            return null;
                        })),
                // Redis 7's functions are not there (no FUNCTION LOAD, no FCALL); what clients and test harnesses
                // call on any server answers as a Redis with no library loaded.
                container("function", -2,
                        of("function|flush", -2, "noscript write", 0, 0, 0, (s, c, r) -> {
                            if (c.argCount() > 3 || c.argCount() == 3 && !Args.is(c.bytes(2), "async")
                                    && !Args.is(c.bytes(2), "sync")) {
                                throw new CommandException("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
                            }
                            r.ok();
                            return null;
                        }),
                        of("function|list", -2, "noscript", 0, 0, 0, (s, c, r) -> {
                            r.array(0);
                            return null;
                        }),
                        of("function|kill", 2, "noscript allow_busy", 0, 0, 0, (s, c, r) -> {
                            throw new CommandException("NOTBUSY No scripts in execution right now.");
                        }),
                        of("function|delete", 3, "noscript write", 0, 0, 0, (s, c, r) -> {
                            throw new CommandException("ERR Library not found");
                        }),
                        of("function|load", -3, "noscript write deny_oom", 0, 0, 0, (s, c, r) -> {
                            throw new CommandException("ERR kvtier has no Redis functions: use EVAL and EVALSHA");
                        })));
    }

    /** SCRIPT LOAD: compiled on a script thread (a large script takes a while), answered with its SHA1. */
    private static CompletableFuture<Void> load(Session s, RespCommand c, Reply r) {
        byte[] body = c.bytes(2);
        String sha = Scripting.sha1hex(body);
        Scripting scripting = s.server.scripting();
        return Async.then(scripting.submit(() -> scripting.compile(sha, body)), r, p -> {
            r.bulk(sha);
            return null;
        });
    }

    private static CompletableFuture<Void> eval(Session s, RespCommand c, Reply r, boolean bySha,
                                                boolean readOnlyCommand) {
        if (bySha && c.length(1) != 40) {
            throw new CommandException(NOSCRIPT); // as Redis: before numkeys is even read
        }
        long numkeys = Args.parseLong(c.bytes(2));
        if (numkeys < 0) {
            throw new CommandException("ERR Number of keys can't be negative");
        }
        if (numkeys > c.argCount() - 3) {
            throw new CommandException("ERR Number of keys can't be greater than number of args");
        }
        Scripting scripting = s.server.scripting();
        long argBytes = 0;
        for (int i = 1; i < c.argCount(); i++) {
            argBytes += c.length(i);
        }
        if (argBytes > Scripting.MAX_SCRIPT_BYTES) {
            throw new CommandException("ERR a script's body, keys and arguments may hold at most "
                    + (Scripting.MAX_SCRIPT_BYTES >> 20) + " MiB");
        }
        byte[] body = bySha ? null : c.bytes(1);
        String sha = bySha ? Args.lower(c.bytes(1)) : Scripting.sha1hex(body);
        ScriptFlags flags = bySha ? scripting.cache().flags(sha) : ScriptFlags.of(body);
        if (flags == null) {
            throw new CommandException(NOSCRIPT);
        }
        if (flags.noCluster() && s.server.cluster() != null) {
            throw new CommandException("ERR Can not run script on cluster, 'no-cluster' flag is set.");
        }
        boolean readOnly = readOnlyCommand || flags.noWrites(); // #!lua flags=no-writes: as EVAL_RO
        byte[][] keys = new byte[(int) numkeys][];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = c.bytes(3 + i);
        }
        byte[][] argv = new byte[c.argCount() - 3 - keys.length][];
        for (int i = 0; i < argv.length; i++) {
            argv[i] = c.bytes(3 + keys.length + i);
        }
        int protocol = r.protocol();
        Supplier<CompletableFuture<Void>> script = () -> reply(scripting.submitScript(
                () -> run(s, scripting, sha, body, keys, argv, readOnly, protocol)), r);
        if (s.holdsKeyGate()) {
            // Queued in a transaction: EXEC holds the keys (KEYS among them) in the gate and, in a cluster, their
            // locks, and replicates them afterwards; taking either again would wait for itself.
            return script.get();
        }
        ClusterNode node = s.server.cluster();
        boolean clustered = node != null && keys.length > 0;
        if (node != null) {
            ClusterRouter.checkScript(node, keys, !readOnly);
        }
        // The gate first, then (in a cluster) the keys' locks: the order transactions and commands take them in.
        return Async.then(s.server.keyGate().exclusive(keys), r, unlock -> Async.andFinally(() -> clustered
                ? ClusterRouter.asPrimary(node, s, r, keys, !readOnly, node.ensureLocal(keys), script, () -> { })
                : script.get(), unlock));
    }

    /** Writes a script's reply once it has run. */
    private static CompletableFuture<Void> reply(CompletableFuture<ByteBuf> reply, Reply r) {
        return Async.then(reply, r, bytes -> {
            if (bytes.isReadable() && bytes.getByte(bytes.readerIndex()) == '-') { // the script returned an error
                int end = bytes.indexOf(bytes.readerIndex(), bytes.writerIndex(), (byte) '\r');
                r.countError(bytes.toString(bytes.readerIndex() + 1, Math.max(0, end - bytes.readerIndex() - 1),
                        java.nio.charset.StandardCharsets.UTF_8));
            }
            r.buf().writeBytes(bytes);
            bytes.release();
            return null;
        });
    }

    /**
     * Runs the script on this script thread; returns its reply, written in {@code protocol}. Its arguments and the
     * values it reads count against {@link Scripting#MAX_TOTAL_BYTES} until it ends.
     */
    private static ByteBuf run(Session s, Scripting scripting, String sha, byte[] body, byte[][] keys, byte[][] argv,
                               boolean readOnly, int protocol) {
        Prototype p = body != null ? scripting.compile(sha, body) : scripting.cache().get(sha);
        if (p == null) {
            throw new CommandException(NOSCRIPT); // flushed since EVALSHA looked
        }
        long argBytes = body == null ? 0 : body.length;
        for (byte[][] list : new byte[][][] {keys, argv}) {
            for (byte[] a : list) {
                argBytes += a.length;
            }
        }
        if (!scripting.hold(argBytes)) {
            throw new CommandException(Bridge.busy());
        }
        Bridge bridge = new Bridge(s, scripting, keys, readOnly, argBytes);
        ScriptRun run = new ScriptRun(sha, bridge, scripting.busyMillis(), Scripting::heapAllows);
        bridge.run = run;
        try {
            LuaValue result = scripting.run(p, run, keys, argv);
            ByteBuf out = Unpooled.buffer();
            try {
                LuaReplies.write(out, result, protocol, Scripting.MAX_SCRIPT_BYTES);
                return out;
            } catch (RuntimeException e) {
                out.release();
                throw e;
            }
        } finally {
            scripting.release(bridge.held);
        }
    }

    /**
     * A script's redis.call: checks the command as Redis checks one called from a script (and that its keys were
     * declared), runs it on the client's event loop against a capturing reply and decodes that reply into Lua. The
     * bytes a script reads this way are capped ({@link Scripting#MAX_SCRIPT_BYTES}).
     */
    private static final class Bridge implements ScriptRun.Calls {
        private final Session session;
        private final Scripting scripting;
        private final Set<ByteBuffer> declared = new HashSet<>();
        private final boolean readOnly;
        /** Bytes this script holds: its arguments and what it has read (all of {@link Scripting#hold}'s). */
        private long held;
        private ScriptRun run;

        Bridge(Session session, Scripting scripting, byte[][] keys, boolean readOnly, long argBytes) {
            this.session = session;
            this.scripting = scripting;
            this.readOnly = readOnly;
            this.held = argBytes;
            for (byte[] k : keys) {
                declared.add(ByteBuffer.wrap(k));
            }
        }

        @Override
        public LuaValue call(byte[][] args) {
            CommandSpec spec = session.server.commands().lookup(args[0]);
            if (spec == null) {
                return error("ERR Unknown Redis command called from script");
            }
            int n = args.length;
            if (!spec.acceptsArgCount(n)) {
                return error("ERR Wrong number of args calling Redis command from script");
            }
            if (!allowed(spec)) {
                return error("ERR This Redis command is not allowed from script");
            }
            boolean write = ClusterRouter.isWrite(spec);
            if (write && readOnly) {
                return error("ERR Write commands are not allowed from read-only scripts.");
            }
            RespCommand cmd = RespCommand.of(args);
            for (int k : ClusterRouter.keyIndexes(spec, cmd)) {
                if (!declared.contains(ByteBuffer.wrap(args[k]))) {
                    return error("ERR Script attempted to access key '" + trim(Args.quoted(args[k])) + "' which is "
                            + "not in KEYS: kvtier runs a script atomically on the keys it declares");
                }
            }
            if (write) {
                run.wrote();
            }
            long limit = Math.min(Scripting.MAX_SCRIPT_BYTES - held, scripting.available());
            Reply captured;
            try {
                captured = execute(spec, cmd, limit).get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return error("ERR the server is shutting down");
            } catch (ExecutionException | RuntimeException e) {
                return error(Dispatcher.errorText(Dispatcher.unwrap(e)));
            }
            ByteBuf bytes = captured.takeCaptured();
            if (bytes == null) {
                if (!captured.overflowed()) {
                    return error("ERR the value could not be read from disk");
                }
                return error(limit < Scripting.MAX_SCRIPT_BYTES - held ? busy()
                        : "ERR a script may hold at most " + (Scripting.MAX_SCRIPT_BYTES >> 20) + " MiB of arguments "
                        + "and values read");
            }
            if (!scripting.hold(bytes.readableBytes())) {
                bytes.release();
                return error(busy());
            }
            held += bytes.readableBytes();
            RespReplyDecoder<LuaValue> decoder = new RespReplyDecoder<>(RespReplyDecoder.Limits.defaults(),
                    UnpooledByteBufAllocator.DEFAULT, LuaReplies.FACTORY);
            try {
                LuaValue v = decoder.decode(bytes);
                return v != null ? v : error("ERR internal error: incomplete reply");
            } finally {
                decoder.close();
                bytes.release();
            }
        }

        /**
         * Runs {@code cmd} on the client's event loop, where commands run, against a reply that captures up to
         * {@code limit} bytes; completes with that reply once the command has answered.
         */
        private CompletableFuture<Reply> execute(CommandSpec spec, RespCommand cmd, long limit) {
            EventLoop loop = session.channel.eventLoop();
            CompletableFuture<Reply> out = new CompletableFuture<>();
            loop.execute(() -> {
                Reply reply = Reply.capturing(loop, limit);
                session.server.commandsProcessed.increment();
                CompletableFuture<Void> done;
                try {
                    done = spec.action().execute(session, cmd, reply);
                } catch (RuntimeException e) {
                    reply.error(Dispatcher.errorText(e));
                    done = null;
                } finally {
                    cmd.release();
                }
                if (done == null) {
                    out.complete(reply);
                    return;
                }
                done.whenCompleteAsync((v, e) -> {
                    if (e != null) {
                        reply.error(Dispatcher.errorText(Dispatcher.unwrap(e)));
                    }
                    out.complete(reply);
                }, loop);
            });
            return out;
        }

        /** All running scripts together hold {@link Scripting#MAX_TOTAL_BYTES}. */
        static String busy() {
            return "ERR scripts running now hold " + (Scripting.MAX_TOTAL_BYTES >> 20) + " MiB of arguments and values,"
                    + " the most they may; retry";
        }

        private static LuaTable error(String message) {
            LuaTable t = new LuaTable();
            t.rawset("err", LuaValue.valueOf(message));
            return t;
        }

        private static String trim(String s) {
            return s.length() > 128 ? s.substring(0, 128) + "..." : s;
        }
    }

    /** The commands a script may call: keyed commands on values (not kvtier's own), and PING, ECHO, TIME, DBSIZE. */
    private static boolean allowed(CommandSpec spec) {
        for (String f : spec.flags()) {
            if (f.equals("noscript")) {
                return false;
            }
        }
        if (KEYLESS_ALLOWED.contains(spec.name())) {
            return true;
        }
        return spec.firstKey() > 0 && !spec.name().startsWith("kvt.") && !spec.name().startsWith("kvc.");
    }
}
