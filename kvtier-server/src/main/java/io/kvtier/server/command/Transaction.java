package io.kvtier.server.command;

import io.kvtier.resp.RespCommand;
import io.kvtier.server.reply.CommandException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;

/**
 * The commands a connection queued between MULTI and EXEC, each already looked up and checked (name, arity,
 * authentication, in a cluster its slot), holding its own arguments: heap ones stay charged to the connection's
 * request memory and payload sinks stay reserved until the transaction runs or is discarded. Event-loop confined.
 */
final class Transaction {
    /** Commands whose keys follow a count ({@code EVAL script numkeys key...}) rather than sit at fixed positions. */
    private static final java.util.Set<String> SCRIPTS = java.util.Set.of("eval", "evalsha", "eval_ro", "evalsha_ro");
    private final List<CommandSpec> specs = new ArrayList<>();
    private final List<RespCommand> commands = new ArrayList<>();
    /** A command could not be queued (unknown, wrong arity, ...): EXEC answers EXECABORT, as Redis. */
    private boolean failed;

    void add(CommandSpec spec, RespCommand command) {
        specs.add(spec);
        commands.add(command);
    }

    void fail() {
        failed = true;
    }

    boolean failed() {
        return failed;
    }

    int size() {
        return specs.size();
    }

    CommandSpec spec(int i) {
        return specs.get(i);
    }

    RespCommand command(int i) {
        return commands.get(i);
    }

    /** Whether any queued command writes (a cluster primary then locks, replicates and holds the reply). */
    boolean writes() {
        for (CommandSpec spec : specs) {
            if (ClusterRouter.isWrite(spec)) {
                return true;
            }
        }
        return false;
    }

    /** Every key the queued commands name, each once, in order of first use. */
    byte[][] keys() {
        LinkedHashSet<ByteBuffer> keys = new LinkedHashSet<>();
        for (int i = 0; i < specs.size(); i++) {
            RespCommand c = commands.get(i);
            for (int k : ClusterRouter.keyIndexes(specs.get(i), c)) {
                keys.add(ByteBuffer.wrap(c.bytes(k)));
            }
            if (SCRIPTS.contains(specs.get(i).name()) && c.argCount() > 2) { // EVAL script numkeys key... arg...
                long n;
                try {
                    n = Args.parseLong(c.bytes(2));
                } catch (CommandException e) {
                    continue; // the script answers its own error when it runs
                }
                for (int k = 3; k < c.argCount() && k < 3 + n; k++) {
                    keys.add(ByteBuffer.wrap(c.bytes(k)));
                }
            }
        }
        byte[][] out = new byte[keys.size()][];
        int n = 0;
        for (ByteBuffer k : keys) {
            out[n++] = k.array();
        }
        return out;
    }

    /** Gives back every argument not yet used (sinks aborted). Idempotent. */
    void release() {
        for (RespCommand c : commands) {
            c.release();
        }
    }
}
