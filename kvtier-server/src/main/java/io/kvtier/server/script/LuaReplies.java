package io.kvtier.server.script;

import io.kvtier.resp.ReplyFactory;
import io.kvtier.resp.RespWriter;
import io.kvtier.server.reply.CommandException;
import io.netty.buffer.ByteBuf;
import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.List;
import java.util.Locale;
import org.luaj.vm2.LuaString;
import org.luaj.vm2.LuaTable;
import org.luaj.vm2.LuaValue;

/**
 * Redis 7.0's conversions between replies and Lua values. A command's reply (RESP2) becomes: integer a number, bulk
 * a string, nil bulk or nil array false, array a table, status a table {ok=...}, error a table {err=...}. A script's
 * result becomes: string a bulk, number an integer (truncated), true 1, false and nil a nil, a table with a string
 * {@code err} an error, with a string {@code ok} a status, any other table an array of its elements 1..n up to the
 * first nil; anything else nil.
 */
public final class LuaReplies {
    private static final LuaValue ERR = LuaValue.valueOf("err");
    private static final LuaValue OK = LuaValue.valueOf("ok");
    /** Deepest nesting of tables a result may have (a table holding itself would never end). */
    static final int MAX_DEPTH = 64;

    private LuaReplies() {
    }

    /** Builds Lua values from a decoded command reply. */
    public static final ReplyFactory<LuaValue> FACTORY = new ReplyFactory<>() {
        @Override
        public LuaValue simple(String text) {
            return statusTable(text);
        }

        @Override
        public LuaValue error(String message) {
            return errorTable(message);
        }

        @Override
        public LuaValue integer(long value) {
            return LuaValue.valueOf((double) value);
        }

        @Override
        public LuaValue bulk(ByteBuf content) {
            try {
                byte[] b = new byte[content.readableBytes()];
                content.readBytes(b);
                return LuaValue.valueOf(b);
            } finally {
                content.release();
            }
        }

        @Override
        public LuaValue nullValue() {
            return LuaValue.FALSE;
        }

        @Override
        public LuaValue aggregate(char type, List<LuaValue> elements) {
            LuaTable t = new LuaTable(elements.size(), 0);
            for (int i = 0; i < elements.size(); i++) {
                t.rawset(i + 1, elements.get(i));
            }
            return t;
        }

        @Override
        public LuaValue other(char type, String text) {
            return LuaValue.valueOf(text);
        }

        @Override
        public void release(LuaValue value) {
        }
    };

    static LuaTable errorTable(String message) {
        LuaTable t = new LuaTable();
        t.rawset(ERR, LuaValue.valueOf(message));
        return t;
    }

    static LuaTable statusTable(String text) {
        LuaTable t = new LuaTable();
        t.rawset(OK, LuaValue.valueOf(text));
        return t;
    }

    static boolean isErrorTable(LuaValue v) {
        return v.istable() && v.rawget(ERR).type() == LuaValue.TSTRING;
    }

    /**
     * Writes a script's result as its reply in {@code protocol}; fails past {@code maxBytes} of reply or
     * {@value #MAX_DEPTH} levels of tables.
     */
    public static void write(ByteBuf out, LuaValue v, int protocol, long maxBytes) {
        write(out, v, protocol, maxBytes, 0);
    }

    private static void write(ByteBuf out, LuaValue v, int protocol, long maxBytes, int depth) {
        if (out.readableBytes() > maxBytes) {
            throw new CommandException("ERR script reply over " + (maxBytes >> 20) + " MiB");
        }
        switch (v.type()) {
            case LuaValue.TSTRING -> {
                LuaString s = v.checkstring();
                if (out.readableBytes() + (long) s.m_length > maxBytes) {
                    throw new CommandException("ERR script reply over " + (maxBytes >> 20) + " MiB");
                }
                RespWriter.bulkHeader(out, s.m_length);
                out.writeBytes(s.m_bytes, s.m_offset, s.m_length);
                RespWriter.crlf(out);
            }
            case LuaValue.TBOOLEAN -> {
                if (v.toboolean()) {
                    RespWriter.integer(out, 1);
                } else {
                    RespWriter.nullBulk(out, protocol);
                }
            }
            case LuaValue.TNUMBER -> RespWriter.integer(out, toLong(v.todouble()));
            case LuaValue.TTABLE -> {
                if (depth >= MAX_DEPTH) {
                    throw new CommandException("ERR reached lua stack limit");
                }
                LuaValue err = v.rawget(ERR);
                if (err.type() == LuaValue.TSTRING) {
                    RespWriter.error(out, oneLine(err.tojstring()));
                    return;
                }
                LuaValue ok = v.rawget(OK);
                if (ok.type() == LuaValue.TSTRING) {
                    RespWriter.simpleString(out, oneLine(ok.tojstring()));
                    return;
                }
                int n = 0;
                while (!v.rawget(n + 1).isnil()) {
                    n++;
                }
                RespWriter.arrayHeader(out, n);
                for (int i = 1; i <= n; i++) {
                    write(out, v.rawget(i), protocol, maxBytes, depth + 1);
                }
            }
            default -> RespWriter.nullBulk(out, protocol);
        }
    }

    private static String oneLine(String s) {
        return s.replace('\r', ' ').replace('\n', ' ');
    }

    /**
     * A Lua number as Redis's C cast to long long truncates it; out of range (and NaN) is what x86-64 makes of it,
     * the smallest long.
     */
    static long toLong(double d) {
        if (Double.isNaN(d) || d >= 0x1p63 || d < -0x1p63) {
            return Long.MIN_VALUE;
        }
        return (long) d;
    }

    /**
     * A number argument of redis.call as Redis 7.0 passes it: C's "%.17g" (0.1 is "0.10000000000000001", 100 is
     * "100", 1e20 is "1e+20").
     */
    public static String formatNumber(double d) {
        if (Double.isNaN(d)) {
            return Double.doubleToRawLongBits(d) < 0 ? "-nan" : "nan";
        }
        if (Double.isInfinite(d)) {
            return d > 0 ? "inf" : "-inf";
        }
        if (d == 0) {
            return 1 / d < 0 ? "-0" : "0";
        }
        BigDecimal rounded = new BigDecimal(d).round(new MathContext(17, RoundingMode.HALF_EVEN));
        int exponent = rounded.precision() - rounded.scale() - 1;
        if (exponent < -4 || exponent >= 17) {
            String m = rounded.unscaledValue().abs().toString();
            String digits = m.replaceAll("0+$", "");
            String mantissa = digits.length() > 1 ? digits.charAt(0) + "." + digits.substring(1) : digits;
            return (d < 0 ? "-" : "") + mantissa + "e" + (exponent < 0 ? "-" : "+")
                    + String.format(Locale.ROOT, "%02d", Math.abs(exponent));
        }
        return rounded.stripTrailingZeros().toPlainString();
    }
}
