package io.kvtier.server.script;

import org.luaj.vm2.LuaClosure;
import org.luaj.vm2.LuaError;
import org.luaj.vm2.LuaFunction;
import org.luaj.vm2.LuaValue;
import org.luaj.vm2.Varargs;
import org.luaj.vm2.lib.DebugLib;

/**
 * The instruction hook of a script thread's interpreter, installed in place of LuaJ's debug library (which scripts
 * never see). It follows the Lua frames to know the line being run, for Redis's error positions
 * ({@code user_script:3:}), and every {@value #CHECK_EVERY} instructions looks at the clock and at SCRIPT KILL.
 * Confined to its thread.
 */
final class ScriptClock extends DebugLib {
    /** Instructions between two looks at the clock: well under a millisecond of Lua. */
    static final int CHECK_EVERY = 10_000;
    private static final int MAX_FRAMES = 4096;

    /** The clock of the script running on this thread, for tables and functions all script threads share. */
    private static final ThreadLocal<ScriptClock> CURRENT = new ThreadLocal<>();

    private final LuaClosure[] closures = new LuaClosure[MAX_FRAMES];
    private final LuaValue[][] stacks = new LuaValue[MAX_FRAMES][];
    private int depth;
    /** The closure whose instructions run now (null between runs), and its registers. */
    private LuaClosure current;
    private LuaValue[] currentStack;
    /**
     * The line of the instruction run last. Kept across returns: an error unwinding the frames leaves it at the line
     * that raised it, which is the line Redis reports.
     */
    private int line;
    private int countdown = CHECK_EVERY;
    private ScriptRun run;

    /** Starts timing {@code r}, which the hook checks until {@link #stop}. */
    void start(ScriptRun r) {
        CURRENT.set(this);
        run = r;
        depth = 0;
        current = null;
        line = 0;
        countdown = CHECK_EVERY;
    }

    void stop() {
        run = null;
        current = null;
        depth = 0;
    }

    /** The line of the instruction run last (0 before the first). */
    int line() {
        return line;
    }

    /**
     * Whether the function running now was called from Lua code, not through pcall (Lua positions an error raised
     * by error() at its caller, and a caller that is not Lua code has no position).
     */
    boolean calledFromLua() {
        return depth > 0 && depth <= MAX_FRAMES && closures[depth - 1] != null;
    }

    /** Lua's error position prefix for the line run last, e.g. "user_script:1: ". */
    String position() {
        return LuaSandbox.CHUNK_NAME + ":" + line + ": ";
    }

    /** {@link #position} of the script running on this thread ("" outside a script). */
    static String currentPosition() {
        ScriptClock c = CURRENT.get();
        return c == null ? "" : c.position();
    }

    @Override
    public LuaValue call(LuaValue modname, LuaValue env) {
        return NIL; // installed directly (globals.debuglib); never loaded as a library
    }

    /** No stack traces: an error's message is all a script's error reply carries. */
    @Override
    public String traceback(int level) {
        return "";
    }

    @Override
    public void onCall(LuaFunction f) {
        push(null, null);
    }

    @Override
    public void onCall(LuaClosure c, Varargs varargs, LuaValue[] stack) {
        push(c, stack);
        current = c;
        currentStack = stack;
    }

    @Override
    public void onReturn() {
        if (depth > 0) {
            depth--;
            if (depth < MAX_FRAMES) {
                stacks[depth] = null;
            }
        }
        current = null;
        currentStack = null;
        for (int i = Math.min(depth, MAX_FRAMES) - 1; i >= 0; i--) {
            if (closures[i] != null) {
                current = closures[i];
                currentStack = stacks[i];
                return;
            }
        }
    }

    private void push(LuaClosure c, LuaValue[] stack) {
        if (depth < MAX_FRAMES) {
            closures[depth] = c;
            stacks[depth] = stack;
        }
        depth++;
    }

    @Override
    public void onInstruction(int pc, Varargs v, int top) {
        LuaClosure c = current;
        if (c != null && c.p.lineinfo != null && pc < c.p.lineinfo.length) {
            line = c.p.lineinfo[pc];
        }
        if (c != null && pc < c.p.code.length && (c.p.code[pc] & 0x3f) == org.luaj.vm2.Lua.OP_CONCAT) {
            checkConcat(c.p.code[pc]);
        }
        if (--countdown > 0) {
            return;
        }
        countdown = CHECK_EVERY;
        ScriptRun r = run;
        LuaError stop = r == null ? null : r.checkpoint();
        if (stop != null) {
            countdown = 1; // stopped: raise again at every instruction, so that no pcall can go on
            throw stop;
        }
    }

    /**
     * Refuses a concatenation ({@code a .. b .. c}, R(A) := R(B) .. ... .. R(C)) whose result would be over
     * {@link Scripting#MAX_SCRIPT_BYTES}, before LuaJ allocates it: doubling a string thirty times asked for a GiB in
     * one allocation and stopped the node. Numbers count as their longest text.
     */
    private void checkConcat(int instruction) {
        LuaValue[] stack = currentStack;
        if (stack == null) {
            return;
        }
        int b = instruction >>> 23;
        int c = (instruction >> 14) & 0x1ff;
        long length = 0;
        for (int r = b; r <= c && r < stack.length; r++) {
            LuaValue x = stack[r];
            if (x instanceof org.luaj.vm2.LuaString s) {
                length += s.length();
            } else if (x != null && x.isnumber()) {
                length += 32;
            }
        }
        if (length > Scripting.MAX_SCRIPT_BYTES) {
            throw new LuaError(LuaValue.valueOf(position() + "string length overflow (a script's strings are at most "
                    + (Scripting.MAX_SCRIPT_BYTES >> 20) + " MiB)"));
        }
    }

    /** The error a killed script keeps raising: every check from then on raises it again, past any pcall. */
    static LuaError killed() {
        return new LuaError(LuaValue.tableOf(new LuaValue[] {LuaValue.valueOf("err"),
                LuaValue.valueOf("ERR Script killed by user with SCRIPT KILL...")}));
    }
}
