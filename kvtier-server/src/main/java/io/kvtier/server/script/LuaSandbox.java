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
        table.rawset("unpack", new UnpackFunction(table.rawget("unpack")));
        table.rawset("concat", new TableConcatFunction(table.rawget("concat")));
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
        // Redis's _G has a metatable (its global protection), itself read-only: getmetatable(_G) finds a table
        // that refuses changes. Here the protection is in ScriptGlobals; the metatable is empty, so lookups are
        // unchanged.
        ReadOnlyTable protection = new ReadOnlyTable();
        protection.seal();
        globals.setmetatable(protection);
        globals.seal();
    }

    private static ReadOnlyTable sharedStringLibrary() {
        org.luaj.vm2.Globals g = new org.luaj.vm2.Globals();
        g.load(new PackageLib());
        g.load(new StringLib()); // sets LuaString.s_metatable to a writable one, replaced below
        LuaTable string = (LuaTable) g.rawget("string");
        string.rawset("rep", new RepFunction(string.rawget("rep")));
        string.rawset("byte", new ByteFunction(string.rawget("byte")));
        string.rawset("format", new FormatFunction(string.rawget("format")));
        string.rawset("gsub", new GsubFunction(string.rawget("gsub")));
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
    private static final class RawsetFunction extends CheckedFunction {
        RawsetFunction(LuaValue original) {
            super(original);
        }

        @Override
        void check(Varargs args) {
            LuaValue t = args.arg1();
            if (t instanceof ReadOnlyTable r && r.sealed() || t instanceof ScriptGlobals g && g.sealed()) {
                throw new LuaError(LuaValue.valueOf("Attempt to modify a readonly table"));
            }
        }
    }

    /**
     * string.rep, refusing a result over {@link Scripting#MAX_SCRIPT_BYTES}: one call could otherwise ask for
     * gigabytes of heap at once.
     */
    private static final class RepFunction extends CheckedFunction {
        RepFunction(LuaValue original) {
            super(original);
        }

        @Override
        void check(Varargs args) {
            long n = Math.max(0, (long) args.checkdouble(2));
            long length = args.checkstring(1).length(); // no separator: LuaJ's rep ignores one, as Lua 5.1's
            if (n * length > Scripting.MAX_SCRIPT_BYTES) {
                throw new LuaError(LuaValue.valueOf(ScriptClock.currentPosition() + "string.rep result over "
                        + (Scripting.MAX_SCRIPT_BYTES >> 20) + " MiB"));
            }
        }
    }

    /** A library function that checks its arguments (a bound, before an allocation), then runs the original. */
    private abstract static class CheckedFunction extends VarArgFunction {
        private final LuaValue original;

        CheckedFunction(LuaValue original) {
            this.original = original;
        }

        /** Raises the Lua error the call deserves, or returns to let the original run. */
        abstract void check(Varargs args);

        @Override
        public final Varargs invoke(Varargs args) {
            check(args);
            return original.invoke(args);
        }
    }

    /** Lua 5.1's limit on the values one call may return (LUAI_MAXCSTACK): what Redis's unpack and string.byte meet. */
    static final int MAX_RESULTS = 8_000;

    private static LuaError tooLarge(String what) {
        return new LuaError(LuaValue.valueOf(ScriptClock.currentPosition() + what + " over "
                + (Scripting.MAX_SCRIPT_BYTES >> 20) + " MiB"));
    }

    /** Lua 5.1's unpack: at most {@link #MAX_RESULTS} values ("too many results to unpack", as Redis). */
    private static final class UnpackFunction extends CheckedFunction {
        UnpackFunction(LuaValue original) {
            super(original);
        }

        @Override
        void check(Varargs args) {
            LuaTable t = args.checktable(1);
            long i = args.isnoneornil(2) ? 1 : (long) args.checkdouble(2);
            long j = args.isnoneornil(3) ? t.length() : (long) args.checkdouble(3);
            if (j - i + 1 >= MAX_RESULTS) {
                throw new LuaError(LuaValue.valueOf(ScriptClock.currentPosition() + "too many results to unpack"));
            }
        }
    }

    /** string.byte: at most {@link #MAX_RESULTS} values ("string slice too long", as Lua 5.1). */
    private static final class ByteFunction extends CheckedFunction {
        ByteFunction(LuaValue original) {
            super(original);
        }

        @Override
        void check(Varargs args) {
            long length = args.checkstring(1).length();
            long i = args.isnoneornil(2) ? 1 : (long) args.checkdouble(2);
            long j = args.isnoneornil(3) ? i : (long) args.checkdouble(3);
            i = i < 0 ? Math.max(1, length + i + 1) : Math.max(1, i);
            j = j < 0 ? length + j + 1 : Math.min(j, length);
            if (j - i + 1 >= MAX_RESULTS) {
                throw new LuaError(LuaValue.valueOf(ScriptClock.currentPosition() + "string slice too long"));
            }
        }
    }

    /**
     * table.concat, refusing a result over {@link Scripting#MAX_SCRIPT_BYTES} before it is built: its length is added
     * up first (stopping at the bound, or at a value concat refuses, which the original then reports).
     */
    private static final class TableConcatFunction extends CheckedFunction {
        TableConcatFunction(LuaValue original) {
            super(original);
        }

        @Override
        void check(Varargs args) {
            LuaTable t = args.checktable(1);
            long sep = args.isnoneornil(2) ? 0 : args.checkstring(2).length();
            long i = args.isnoneornil(3) ? 1 : (long) args.checkdouble(3);
            long j = args.isnoneornil(4) ? t.length() : (long) args.checkdouble(4);
            long total = 0;
            for (long k = i; k <= j; k++) {
                LuaValue v = t.get((int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, k)));
                if (v instanceof LuaString str) {
                    total += str.length();
                } else if (v.isnumber()) {
                    total += 32;
                } else {
                    break; // the original raises "invalid value (at index k) in table for 'concat'"
                }
                total += k < j ? sep : 0;
                if (total > Scripting.MAX_SCRIPT_BYTES) {
                    throw tooLarge("table.concat result");
                }
            }
        }
    }

    /**
     * string.format, refusing a result over {@link Scripting#MAX_SCRIPT_BYTES}: the format and every argument's
     * length (as text), plus what a width or precision may add, are added up first.
     */
    private static final class FormatFunction extends CheckedFunction {
        FormatFunction(LuaValue original) {
            super(original);
        }

        @Override
        void check(Varargs args) {
            LuaString fmt = args.checkstring(1);
            long total = fmt.length() * 100L; // each directive's width and precision are at most 99 (two digits)
            for (int k = 2; k <= args.narg(); k++) {
                LuaValue v = args.arg(k);
                total += v instanceof LuaString str ? str.length() : 32;
                if (total > Scripting.MAX_SCRIPT_BYTES) {
                    throw tooLarge("string.format result");
                }
            }
        }
    }

    /**
     * string.gsub, refusing a result over {@link Scripting#MAX_SCRIPT_BYTES}: with a replacement string, the matches
     * are counted first (a gsub that replaces each with nothing) and the longest result that many replacements can
     * make is checked; with a table or a function, each replacement's length is added up as it comes.
     */
    private static final class GsubFunction extends VarArgFunction {
        private final LuaValue gsub;

        GsubFunction(LuaValue gsub) {
            this.gsub = gsub;
        }

        @Override
        public Varargs invoke(Varargs args) {
            LuaString src = args.checkstring(1);
            LuaValue repl = args.arg(3);
            if (repl instanceof LuaString r) {
                long captures = 0;
                for (int k = 0; k < r.length(); k++) {
                    if (r.luaByte(k) == '%') {
                        captures++;
                    }
                }
                long perMatch = r.length() + captures * src.length();
                if (src.length() + (src.length() + 1L) * perMatch > Scripting.MAX_SCRIPT_BYTES) {
                    // As many matches as positions could go over: count them.
                    long matches = gsub.invoke(LuaValue.varargsOf(new LuaValue[] {src, args.arg(2),
                            LuaValue.EMPTYSTRING, args.arg(4)})).arg(2).tolong();
                    if (src.length() + matches * perMatch > Scripting.MAX_SCRIPT_BYTES) {
                        throw tooLarge("string.gsub result");
                    }
                }
                return gsub.invoke(args);
            }
            if (repl.istable() || repl.isfunction()) {
                long[] total = {src.length()};
                LuaValue counted = new VarArgFunction() {
                    @Override
                    public Varargs invoke(Varargs captures) {
                        LuaValue v = repl.istable() ? repl.get(captures.arg1()) : repl.invoke(captures).arg1();
                        if (v instanceof LuaString str) {
                            total[0] += str.length();
                        } else if (v.isnumber()) {
                            total[0] += 32;
                        }
                        if (total[0] > Scripting.MAX_SCRIPT_BYTES) {
                            throw tooLarge("string.gsub result");
                        }
                        return v;
                    }
                };
                return gsub.invoke(LuaValue.varargsOf(new LuaValue[] {src, args.arg(2), counted, args.arg(4)}));
            }
            return gsub.invoke(args);
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
