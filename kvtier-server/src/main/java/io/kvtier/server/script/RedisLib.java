package io.kvtier.server.script;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import org.luaj.vm2.LuaError;
import org.luaj.vm2.LuaTable;
import org.luaj.vm2.LuaValue;
import org.luaj.vm2.Varargs;
import org.luaj.vm2.lib.VarArgFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code redis} table scripts see: call, pcall, error_reply, status_reply, sha1hex, log and its levels, and
 * replicate_commands (a no-op that answers true, as in Redis 7.0, where scripts always replicate their effects).
 */
final class RedisLib {
    private static final Logger log = LoggerFactory.getLogger("io.kvtier.script");
    static final int LOG_DEBUG = 0;
    static final int LOG_VERBOSE = 1;
    static final int LOG_NOTICE = 2;
    static final int LOG_WARNING = 3;

    private RedisLib() {
    }

    static ReadOnlyTable create(LuaSandbox sandbox) {
        ReadOnlyTable redis = new ReadOnlyTable();
        redis.rawset("call", function(args -> call(sandbox, args, true)));
        redis.rawset("pcall", function(args -> call(sandbox, args, false)));
        redis.rawset("error_reply", function(args -> errorReply(args.checkjstring(1))));
        redis.rawset("status_reply", function(args -> LuaReplies.statusTable(args.checkjstring(1))));
        redis.rawset("sha1hex", function(args -> {
            if (args.narg() != 1) {
                throw new LuaError(LuaValue.valueOf("wrong number of arguments"));
            }
            return LuaValue.valueOf(sha1hex(bytes(args.checkstring(1))));
        }));
        redis.rawset("log", function(args -> {
            logLine(args);
            return LuaValue.NIL;
        }));
        redis.rawset("replicate_commands", function(args -> LuaValue.TRUE));
        redis.rawset("LOG_DEBUG", LuaValue.valueOf(LOG_DEBUG));
        redis.rawset("LOG_VERBOSE", LuaValue.valueOf(LOG_VERBOSE));
        redis.rawset("LOG_NOTICE", LuaValue.valueOf(LOG_NOTICE));
        redis.rawset("LOG_WARNING", LuaValue.valueOf(LOG_WARNING));
        redis.seal();
        return redis;
    }

    private interface Body {
        LuaValue apply(Varargs args);
    }

    private static LuaValue function(Body body) {
        return new VarArgFunction() {
            @Override
            public Varargs invoke(Varargs args) {
                return body.apply(args);
            }
        };
    }

    /**
     * redis.call / redis.pcall: the arguments as Redis takes them (strings, and numbers as Lua prints them), the
     * command run by the script's bridge; an error reply is raised by call and returned by pcall.
     */
    private static LuaValue call(LuaSandbox sandbox, Varargs args, boolean raise) {
        LuaValue result;
        if (args.narg() == 0) {
            result = LuaReplies.errorTable("ERR Please specify at least one argument for this redis lib call");
        } else {
            byte[][] argv = new byte[args.narg()][];
            result = null;
            for (int i = 0; i < argv.length; i++) {
                LuaValue a = args.arg(i + 1);
                if (a.type() == LuaValue.TSTRING) {
                    argv[i] = bytes(a.checkstring());
                } else if (a.type() == LuaValue.TNUMBER) {
                    argv[i] = LuaReplies.formatNumber(a.todouble()).getBytes(StandardCharsets.US_ASCII);
                } else {
                    result = LuaReplies.errorTable("ERR Lua redis lib command arguments must be strings or integers");
                    break;
                }
            }
            if (result == null) {
                result = sandbox.run().calls().call(argv);
            }
        }
        if (raise && LuaReplies.isErrorTable(result)) {
            throw new LuaError(result);
        }
        return result;
    }

    /**
     * redis.error_reply as Redis 7.0's: a leading '-' is dropped, the first word becomes the error code (ERR when
     * there is none), trailing newlines are trimmed.
     */
    static LuaTable errorReply(String text) {
        String s = text.startsWith("-") ? text : "-" + text;
        int space = s.indexOf(' ');
        String message = space < 0 ? "ERR " + s.substring(1) : s.substring(1, space) + " " + s.substring(space + 1);
        return LuaReplies.errorTable(message.replaceAll("[\\r\\n]+$", ""));
    }

    private static void logLine(Varargs args) {
        if (args.narg() < 2) {
            throw new LuaError(LuaValue.valueOf("redis.log() requires two arguments or more."));
        }
        if (args.arg1().type() != LuaValue.TNUMBER) {
            throw new LuaError(LuaValue.valueOf("First argument must be a number (log level)."));
        }
        int level = args.arg1().toint();
        if (level < LOG_DEBUG || level > LOG_WARNING) {
            throw new LuaError(LuaValue.valueOf("Invalid debug level."));
        }
        StringBuilder line = new StringBuilder();
        for (int i = 2; i <= args.narg(); i++) {
            if (i > 2) {
                line.append(' ');
            }
            line.append(args.arg(i).tojstring());
        }
        switch (level) {
            case LOG_WARNING -> log.warn("{}", line);
            case LOG_NOTICE -> log.info("{}", line);
            default -> log.debug("{}", line);
        }
    }

    static byte[] bytes(org.luaj.vm2.LuaString s) {
        byte[] out = new byte[s.m_length];
        System.arraycopy(s.m_bytes, s.m_offset, out, 0, s.m_length);
        return out;
    }

    static String sha1hex(byte[] body) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(body));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-1", e);
        }
    }
}
