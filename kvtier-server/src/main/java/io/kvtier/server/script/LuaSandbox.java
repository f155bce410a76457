package io.kvtier.server.script;

import io.kvtier.server.reply.CommandException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.luaj.vm2.LuaClosure;
import org.luaj.vm2.LuaError;
import org.luaj.vm2.LuaString;
import org.luaj.vm2.LuaTable;
import org.luaj.vm2.LuaValue;
import org.luaj.vm2.Prototype;
import org.luaj.vm2.Varargs;
import org.luaj.vm2.compiler.LuaC;
import org.luaj.vm2.lib.BaseLib;
import org.luaj.vm2.lib.PackageLib;
import org.luaj.vm2.lib.StringLib;
import org.luaj.vm2.lib.TableLib;
import org.luaj.vm2.lib.VarArgFunction;
import org.luaj.vm2.lib.jse.JseMathLib;

/**
 * One script thread's Lua interpreter (LuaJ, Lua 5.2 with Redis's 5.1 {@code unpack}), sandboxed as Redis 7.0 does:
 * the base, string, table and math libraries and the {@code redis} table only; no os, io, package, require, load,
 * loadfile, dofile, print, collectgarbage or debug; the globals and library tables read-only. A compiled
 * {@link Prototype} is shared by all threads; each run gets a fresh closure over this thread's globals. Confined to
 * its thread.
 */
public final class LuaSandbox {
    /** The chunk name scripts are compiled under: Redis's, which error messages quote. */
    static final String CHUNK_NAME = "user_script";
    /** LuaJ's own run-time errors say "@user_script:1 message"; Lua's say "user_script:1: message". */
    private static final Pattern LUAJ_POSITION = Pattern.compile("^@?" + CHUNK_NAME + ":(\\d+) ");
    /**
     * The string library, one for the whole JVM: LuaJ gives all strings one metatable (a static), whose index is
     * this table, so it is built once, read-only, with {@code string.rep} bounded, before any script runs.
     */
    private static final ReadOnlyTable STRING = sharedStringLibrary();

    private final ScriptClock clock = new ScriptClock();
    private final ScriptGlobals globals = new ScriptGlobals(clock);
    private ScriptRun run;

    public LuaSandbox() {
        globals.load(new BaseLib());
        globals.load(new PackageLib()); // the libraries below register in package.loaded; removed again after
        globals.load(new TableLib());
        globals.load(new JseMathLib());
        for (String name : new String[] {"package", "require", "module", "dofile", "load", "loadfile", "print",
                "collectgarbage"}) {
            globals.install(name, LuaValue.NIL);
        }
        LuaTable table = (LuaTable) globals.rawget("table");
        globals.install("unpack", table.rawget("unpack")); // Lua 5.1's global, which Redis scripts use
        globals.install("error", new ErrorFunction());
        globals.install("pcall", new PcallFunction(globals.rawget("pcall")));
        globals.install("rawset", new RawsetFunction(globals.rawget("rawset")));
        globals.install("redis", RedisLib.create(this));
        for (String lib : new String[] {"table", "math"}) {
            globals.install(lib, ReadOnlyTable.copyOf((LuaTable) globals.rawget(lib)));
        }
        globals.install("string", STRING);
        globals.install("_G", globals);
        globals.debuglib = clock; // the instruction hook; scripts have no debug library
        globals.seal();
    }

    private static ReadOnlyTable sharedStringLibrary() {
        org.luaj.vm2.Globals g = new org.luaj.vm2.Globals();
        g.load(new PackageLib());
        g.load(new StringLib()); // sets LuaString.s_metatable to a writable one, replaced below
        LuaTable string = (LuaTable) g.rawget("string");
        string.rawset("rep", new RepFunction(string.rawget("rep")));
        ReadOnlyTable shared = ReadOnlyTable.copyOf(string);
        ReadOnlyTable meta = new ReadOnlyTable();
        meta.rawset(LuaValue.INDEX, shared);
        meta.seal();
        LuaString.s_metatable = meta;
        return shared;
    }

    /** Compiles a script body; a syntax error is Redis's "Error compiling script" reply. */
    public static Prototype compile(byte[] body) {
        try {
            return LuaC.instance.compile(new ByteArrayInputStream(body), "@" + CHUNK_NAME); // '@': named as is
        } catch (LuaError e) {
            throw new CommandException("ERR Error compiling script (new function): " + firstLine(e.getMessage()));
        } catch (IOException e) {
            throw new CommandException("ERR Error compiling script (new function): " + e.getMessage());
        }
    }

    /** The run in progress on this thread (its redis.call bridge), or null. */
    ScriptRun run() {
        return run;
    }

    /**
     * Runs {@code p} with KEYS and ARGV and returns what it returned; a Lua error (its own, or a command's raised by
     * redis.call) is thrown as the error reply Redis 7.0 writes, ending in " script: SHA, on @user_script:LINE.".
     */
    public LuaValue run(Prototype p, ScriptRun r, byte[][] keys, byte[][] argv) {
        globals.install("KEYS", strings(keys));
        globals.install("ARGV", strings(argv));
        run = r;
        clock.start(r);
        try {
            return new LuaClosure(p, globals).call();
        } catch (LuaError e) {
            throw new CommandException(errorText(e.getMessageObject()) + suffix(r));
        } catch (StackOverflowError e) {
            throw new CommandException("ERR " + clock.position() + "stack overflow" + suffix(r));
        } finally {
            clock.stop();
            run = null;
            globals.install("KEYS", LuaValue.NIL);
            globals.install("ARGV", LuaValue.NIL);
        }
    }

    private String suffix(ScriptRun r) {
        return " script: " + r.sha() + ", on @" + CHUNK_NAME + ":" + clock.line() + ".";
    }

    /**
     * The error reply for a value a script raised, as Redis's error handler makes it: an error table's {@code err}
     * as it is, anything else "ERR " and its text (LuaJ's own messages get Lua's "user_script:N: " position form).
     */
    static String errorText(LuaValue error) {
        if (error != null && error.istable()) {
            LuaValue err = error.rawget("err");
            if (err.type() == LuaValue.TSTRING) {
                return err.tojstring();
            }
            return "ERR " + error.tojstring();
        }
        String text = error == null ? "nil" : firstLine(error.tojstring());
        Matcher m = LUAJ_POSITION.matcher(text);
        return "ERR " + (m.find() ? m.replaceFirst(CHUNK_NAME + ":$1: ") : text);
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "nil";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    private static LuaTable strings(byte[][] values) {
        LuaTable t = new LuaTable(values.length, 0);
        for (int i = 0; i < values.length; i++) {
            t.rawset(i + 1, LuaValue.valueOf(values[i]));
        }
        return t;
    }

    /**
     * Redis's pcall: as Lua's, except that an error table (what redis.call raises) comes back as its {@code err}
     * string, so that a script can read the error of a command it called.
     */
    private static final class PcallFunction extends VarArgFunction {
        private final LuaValue pcall;

        PcallFunction(LuaValue pcall) {
            this.pcall = pcall;
        }

        @Override
        public Varargs invoke(Varargs args) {
            Varargs result = pcall.invoke(args);
            if (!result.arg1().toboolean() && result.arg(2).istable()) {
                LuaValue err = result.arg(2).rawget("err");
                if (err.type() == LuaValue.TSTRING || err.type() == LuaValue.TNUMBER) {
                    return LuaValue.varargsOf(LuaValue.FALSE, err);
                }
            }
            return result;
        }
    }

    /**
     * rawset, refusing a protected table as Redis's does: raised from a library function, the error has no position.
     */
    private static final class RawsetFunction extends VarArgFunction {
        private final LuaValue rawset;

        RawsetFunction(LuaValue rawset) {
            this.rawset = rawset;
        }

        @Override
        public Varargs invoke(Varargs args) {
            LuaValue t = args.arg1();
            if (t instanceof ReadOnlyTable r && r.sealed() || t instanceof ScriptGlobals g && g.sealed()) {
                throw new LuaError(LuaValue.valueOf("Attempt to modify a readonly table"));
            }
            return rawset.invoke(args);
        }
    }

    /**
     * string.rep, refusing a result over {@link Scripting#MAX_SCRIPT_BYTES}: one call could otherwise ask for
     * gigabytes of heap at once.
     */
    private static final class RepFunction extends VarArgFunction {
        private final LuaValue rep;

        RepFunction(LuaValue rep) {
            this.rep = rep;
        }

        @Override
        public Varargs invoke(Varargs args) {
            long n = Math.max(0, (long) args.checkdouble(2));
            long length = args.checkstring(1).length(); // no separator: LuaJ's rep ignores one, as Lua 5.1's
            if (n * length > Scripting.MAX_SCRIPT_BYTES) {
                throw new LuaError(LuaValue.valueOf(ScriptClock.currentPosition() + "string.rep result over "
                        + (Scripting.MAX_SCRIPT_BYTES >> 20) + " MiB"));
            }
            return rep.invoke(args);
        }
    }

    /** Lua's error(message [, level]), positioned at the line running (LuaJ's own form differs from Lua 5.1's). */
    private final class ErrorFunction extends VarArgFunction {
        @Override
        public Varargs invoke(Varargs args) {
            LuaValue message = args.arg1();
            int level = args.optint(2, 1);
            boolean text = message.type() == LuaValue.TSTRING || message.type() == LuaValue.TNUMBER;
            if (level > 0 && text && clock.calledFromLua()) {
                message = LuaValue.valueOf(clock.position() + message.tojstring());
            }
            throw new LuaError(message);
        }
    }
}
