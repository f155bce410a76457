package io.kvtier.server.script;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.resp.RespReplyDecoder;
import io.kvtier.server.reply.CommandException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.luaj.vm2.LuaValue;

/**
 * Redis 7.0's Lua conversions and sandbox, on the interpreter itself: a script's result as the bytes of its reply,
 * a command's reply as the Lua value a script sees, the protected globals, error texts and positions, and SCRIPT KILL.
 * The expected bytes are what redis-server 7.0.15 answers to the same scripts.
 */
class LuaScriptingTest {
    private static final byte[][] NONE = new byte[0][];

    /** What a script's redis.call gets back for each command name: a canned RESP2 reply, decoded as kvtier does. */
    private static final ScriptRun.Calls REPLIES = args -> decode(switch (new String(args[0], StandardCharsets.UTF_8)) {
        case "status" -> "+OK\r\n";
        case "int" -> ":5\r\n";
        case "nil" -> "$-1\r\n";
        case "nilarray" -> "*-1\r\n";
        case "bulk" -> "$3\r\nabc\r\n";
        case "array" -> "*3\r\n:1\r\n$1\r\nx\r\n$-1\r\n";
        case "error" -> "-ERR value is not an integer or out of range\r\n";
        case "echo" -> "$" + args[1].length + "\r\n" + new String(args[1], StandardCharsets.UTF_8) + "\r\n";
        default -> "-ERR Unknown Redis command called from script\r\n";
    });

    private static LuaValue decode(String resp) {
        RespReplyDecoder<LuaValue> d = new RespReplyDecoder<>(RespReplyDecoder.Limits.defaults(),
                UnpooledByteBufAllocator.DEFAULT, LuaReplies.FACTORY);
        ByteBuf in = Unpooled.copiedBuffer(resp, StandardCharsets.UTF_8);
        try {
            return d.decode(in);
        } finally {
            in.release();
            d.close();
        }
    }

    private final LuaSandbox sandbox = new LuaSandbox();

    /** The reply (RESP2) of {@code script} run with KEYS {@code keys}, or its error reply. */
    private String eval(String script, String... keys) {
        return eval(script, REPLIES, 60_000, keys);
    }

    private String eval(String script, ScriptRun.Calls calls, long busyMillis, String... keys) {
        byte[] body = script.getBytes(StandardCharsets.UTF_8);
        String sha = Scripting.sha1hex(body);
        byte[][] k = new byte[keys.length][];
        for (int i = 0; i < keys.length; i++) {
            k[i] = keys[i].getBytes(StandardCharsets.UTF_8);
        }
        try {
            LuaValue v = sandbox.run(LuaSandbox.compile(body), new ScriptRun(sha, calls, busyMillis), k, NONE);
            ByteBuf out = Unpooled.buffer();
            try {
                LuaReplies.write(out, v, 2, Scripting.MAX_SCRIPT_BYTES);
                return out.toString(StandardCharsets.UTF_8);
            } finally {
                out.release();
            }
        } catch (CommandException e) {
            return "-" + e.getMessage() + "\r\n";
        }
    }

    private static String suffix(String script, int line) {
        return " script: " + Scripting.sha1hex(script.getBytes(StandardCharsets.UTF_8)) + ", on @user_script:" + line
                + ".\r\n";
    }

    @Test
    void luaValuesBecomeRedisReplies() {
        assertThat(eval("return 1")).isEqualTo(":1\r\n");
        assertThat(eval("return 3.99")).isEqualTo(":3\r\n");
        assertThat(eval("return -3.7")).isEqualTo(":-3\r\n");
        assertThat(eval("return 1e20")).isEqualTo(":-9223372036854775808\r\n");
        assertThat(eval("return '12'")).isEqualTo("$2\r\n12\r\n");
        assertThat(eval("return true")).isEqualTo(":1\r\n");
        assertThat(eval("return false")).isEqualTo("$-1\r\n");
        assertThat(eval("return nil")).isEqualTo("$-1\r\n");
        assertThat(eval("return {1,2,3,nil,4}")).isEqualTo("*3\r\n:1\r\n:2\r\n:3\r\n");
        assertThat(eval("return {1, {err='inner'}, {ok='st'}, true, false, 2.9}"))
                .isEqualTo("*6\r\n:1\r\n-inner\r\n+st\r\n:1\r\n$-1\r\n:2\r\n");
        assertThat(eval("return {ok='fine'}")).isEqualTo("+fine\r\n");
        assertThat(eval("return {err='bad thing'}")).isEqualTo("-bad thing\r\n");
        assertThat(eval("return {err='a\\r\\nb'}")).isEqualTo("-a  b\r\n");
        assertThat(eval("return {ok=5}")).isEqualTo("*0\r\n"); // ok must be a string
        assertThat(eval("return redis.error_reply('My Error')")).isEqualTo("-My Error\r\n");
        assertThat(eval("return redis.error_reply('-My Error')")).isEqualTo("-My Error\r\n");
        assertThat(eval("return redis.error_reply('NoSpace')")).isEqualTo("-ERR NoSpace\r\n");
        assertThat(eval("return redis.status_reply('X')")).isEqualTo("+X\r\n");
        assertThat(eval("return redis.sha1hex('')")).isEqualTo("$40\r\nda39a3ee5e6b4b0d3255bfef95601890afd80709\r\n");
        assertThat(eval("return print")).startsWith("-ERR user_script:1: Script attempted to access nonexistent");
    }

    @Test
    void aTableThatHoldsItselfIsRefusedNotFollowedForever() {
        assertThat(eval("local t = {}; t[1] = t; return t")).isEqualTo("-ERR reached lua stack limit\r\n");
    }

    @Test
    void commandRepliesBecomeLuaValues() {
        assertThat(eval("local r = redis.call('status'); return {type(r), r.ok}"))
                .isEqualTo("*2\r\n$5\r\ntable\r\n$2\r\nOK\r\n");
        assertThat(eval("local r = redis.call('int'); return {type(r), r + 1}")).isEqualTo("*2\r\n$6\r\nnumber\r\n:6\r\n");
        assertThat(eval("return type(redis.call('nil')) .. ':' .. tostring(redis.call('nil'))"))
                .isEqualTo("$13\r\nboolean:false\r\n");
        assertThat(eval("return tostring(redis.call('nilarray'))")).isEqualTo("$5\r\nfalse\r\n");
        assertThat(eval("return redis.call('bulk')")).isEqualTo("$3\r\nabc\r\n");
        // A nil element became false, which goes back as a nil: the array keeps its length (MGET of a missing key).
        assertThat(eval("return redis.call('array')")).isEqualTo("*3\r\n:1\r\n$1\r\nx\r\n$-1\r\n");
        assertThat(eval("local r = redis.call('array'); return #r .. tostring(r[3])")).isEqualTo("$6\r\n3false\r\n");
        assertThat(eval("local r = redis.pcall('error'); return r.err"))
                .isEqualTo("$43\r\nERR value is not an integer or out of range\r\n");
        assertThat(eval("return redis.pcall('error')")).isEqualTo("-ERR value is not an integer or out of range\r\n");
    }

    @Test
    void numberArgumentsArePassedAsLuaPrintsThem() {
        assertThat(eval("return redis.call('echo', 100)")).isEqualTo("$3\r\n100\r\n");
        assertThat(eval("return redis.call('echo', 1.5)")).isEqualTo("$3\r\n1.5\r\n");
        assertThat(eval("return redis.call('echo', 1e20)")).isEqualTo("$5\r\n1e+20\r\n");
        assertThat(eval("return redis.call('echo', {})"))
                .startsWith("-ERR Lua redis lib command arguments must be strings or integers script:");
        // C's %.17g, as redis-server 7.0.15 prints them.
        assertThat(LuaReplies.formatNumber(0.1)).isEqualTo("0.10000000000000001");
        assertThat(LuaReplies.formatNumber(1.0 / 3)).isEqualTo("0.33333333333333331");
        assertThat(LuaReplies.formatNumber(-0.5)).isEqualTo("-0.5");
        assertThat(LuaReplies.formatNumber(0.0001)).isEqualTo("0.0001");
        assertThat(LuaReplies.formatNumber(0.00001)).isEqualTo("1.0000000000000001e-05");
        assertThat(LuaReplies.formatNumber(123456789012345.0)).isEqualTo("123456789012345");
        assertThat(LuaReplies.formatNumber(1e17)).isEqualTo("1e+17");
        assertThat(LuaReplies.formatNumber(Double.POSITIVE_INFINITY)).isEqualTo("inf");
    }

    @Test
    void errorsCarryRedisTextAndPosition() {
        String s = "local a = 1\nerror('boom')";
        assertThat(eval(s)).isEqualTo("-ERR user_script:2: boom" + suffix(s, 2));
        s = "error({err='E2 custom'})";
        assertThat(eval(s)).isEqualTo("-E2 custom" + suffix(s, 1));
        s = "return redis.call('nosuch')";
        assertThat(eval(s)).isEqualTo("-ERR Unknown Redis command called from script" + suffix(s, 1));
        s = "\n\nreturn redis.call('error')";
        assertThat(eval(s)).isEqualTo("-ERR value is not an integer or out of range" + suffix(s, 3));
        assertThat(eval("local ok, e = pcall(redis.call, 'nosuch'); return e"))
                .isEqualTo("$44\r\nERR Unknown Redis command called from script\r\n");
        assertThat(eval("local ok, e = pcall(error, 'boom'); return e")).isEqualTo("$4\r\nboom\r\n");
        assertThat(eval("return redis.call()"))
                .startsWith("-ERR Please specify at least one argument for this redis lib call script:");
        assertThatThrownBy(() -> LuaSandbox.compile("syntax error here".getBytes(StandardCharsets.UTF_8)))
                .hasMessageStartingWith("ERR Error compiling script (new function): user_script:1:");
    }

    @Test
    void globalsAndLibrariesAreProtected() {
        String s = "return x";
        assertThat(eval(s)).isEqualTo(
                "-ERR user_script:1: Script attempted to access nonexistent global variable 'x'" + suffix(s, 1));
        s = "x = 1";
        assertThat(eval(s)).isEqualTo("-ERR user_script:1: Attempt to modify a readonly table" + suffix(s, 1));
        for (String lib : new String[] {"os", "io", "require", "loadfile", "dofile", "debug", "package", "load"}) {
            assertThat(eval("return " + lib)).as(lib).contains("nonexistent global variable '" + lib + "'");
        }
        assertThat(eval("string.format = nil")).contains("Attempt to modify a readonly table");
        assertThat(eval("rawset(_G, 'y', 1)")).startsWith("-ERR Attempt to modify a readonly table script:");
        assertThat(eval("redis.call = nil")).contains("Attempt to modify a readonly table");
        assertThat(eval("return ('x'):rep(3)")).isEqualTo("$3\r\nxxx\r\n");
        assertThat(eval("return string.rep('ab', 2, ',')")).isEqualTo("$4\r\nabab\r\n"); // Lua 5.1: no separator
        assertThat(eval("return #string.rep('x', 2^31)")).startsWith("-ERR user_script:1: string.rep result over 64 MiB");
        assertThat(eval("return #('x'):rep(2^31)")).startsWith("-ERR user_script:1: string.rep result over 64 MiB");
        // The string library behind every string's methods is one for the JVM: no script may change it.
        assertThat(eval("getmetatable('').__index.upper = nil")).contains("Attempt to modify a readonly table");
        assertThat(eval("getmetatable('').__index = {}")).contains("Attempt to modify a readonly table");
        assertThat(eval("return ('x'):upper()")).isEqualTo("$1\r\nX\r\n");
        assertThat(eval("return unpack({7, 8})")).isEqualTo(":7\r\n");
        assertThat(eval("local t = {}; t.a = 1; return t.a")).isEqualTo(":1\r\n"); // local tables stay writable
        assertThat(eval("return {KEYS[1], KEYS[2], #KEYS}", "k1", "k2")).isEqualTo("*3\r\n$2\r\nk1\r\n$2\r\nk2\r\n:2\r\n");
    }

    /**
     * Issue 29: one line of Lua asked for a GiB at once and stopped the node. Every way to build a large string or a
     * long list of values is bounded before the allocation, with Redis's (Lua 5.1's) error where it has one.
     */
    @Test
    void allocationsAreRefusedBeforeTheyHappen() {
        assertThat(eval("local s = 'x' for i = 1, 30 do s = s .. s end return #s"))
                .startsWith("-ERR user_script:1: string length overflow");
        assertThat(eval("local s = ('x'):rep(40 * 2^20)\nlocal t = s .. 'a' .. s\nreturn #t"))
                .startsWith("-ERR user_script:2: string length overflow");
        assertThat(eval("local s = 'x' for i = 1, 20 do s = s .. s end return #(s .. s)")).isEqualTo(":2097152\r\n");
        assertThat(eval("return unpack({}, 1, 2e8)")).startsWith("-ERR user_script:1: too many results to unpack");
        assertThat(eval("return #{unpack({}, 1, 7000)}")).isEqualTo(":0\r\n");
        assertThat(eval("return table.unpack({1, 2, 3}, 2)")).isEqualTo(":2\r\n");
        assertThat(eval("local t = {} local s = ('x'):rep(2^20) for i = 1, 430 do t[i] = s end "
                + "return #table.concat(t)")).startsWith("-ERR user_script:1: table.concat result over 64 MiB");
        assertThat(eval("return table.concat({'a', 'b', 3}, ',')")).isEqualTo("$5\r\na,b,3\r\n");
        assertThat(eval("return #{string.byte(('x'):rep(2^20), 1, -1)}"))
                .startsWith("-ERR user_script:1: string slice too long");
        assertThat(eval("return {string.byte('abc', 1, -1)}")).isEqualTo("*3\r\n:97\r\n:98\r\n:99\r\n");
        assertThat(eval("local s = ('x'):rep(2^25) return #string.format('%s%s%s', s, s, s)"))
                .startsWith("-ERR user_script:1: string.format result over 64 MiB");
        assertThat(eval("return string.format('%d-%s', 7, 'a')")).isEqualTo("$3\r\n7-a\r\n");
        assertThat(eval("local s = ('x'):rep(2^20) return #string.gsub(s, '.', 'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy')"))
                .startsWith("-ERR user_script:1: string.gsub result over 64 MiB");
        assertThat(eval("local big = ('y'):rep(2^20) return #string.gsub(('x'):rep(100), '.', function() return big end)"))
                .startsWith("-ERR user_script:1: string.gsub result over 64 MiB");
        assertThat(eval("return string.gsub('hello world', 'o', '0')")).isEqualTo("$11\r\nhell0 w0rld\r\n");
        assertThat(eval("return string.gsub('a b', '(%w)', {a = 'A'})")).isEqualTo("$3\r\nA b\r\n");
        assertThat(eval("return string.gsub('a b', '%w', function(c) return c:upper() end)"))
                .isEqualTo("$3\r\nA B\r\n");
        assertThat(eval("return string.gsub('abc', '%w', '%0%0')")).isEqualTo("$6\r\naabbcc\r\n");
    }

    @Test
    void scriptKillStopsALoopThatHasNotWrittenEvenThroughPcall() throws Exception {
        String s = "while true do pcall(function() local x = 1 end) end";
        byte[] body = s.getBytes(StandardCharsets.UTF_8);
        ScriptRun run = new ScriptRun(Scripting.sha1hex(body), REPLIES, 0);
        CompletableFuture<String> result = CompletableFuture.supplyAsync(() -> {
            try {
                sandbox.run(LuaSandbox.compile(body), run, NONE, NONE);
                return "returned";
            } catch (CommandException e) {
                return e.getMessage();
            }
        });
        Thread.sleep(200);
        assertThat(result).isNotDone();
        assertThat(run.kill()).isTrue();
        assertThat(result.get(10, TimeUnit.SECONDS))
                .startsWith("ERR Script killed by user with SCRIPT KILL... script: ");
    }

    /**
     * The heap guard's stop path: a script building a huge table is stopped with an error once its guard says so
     * (here after 32 MiB of allocation; in the server, when the old generation fills 85% of the heap), even through
     * pcall; a long loop that keeps nothing is not stopped by the server's guard.
     */
    @Test
    void aScriptFillingTheHeapIsStopped() throws Exception {
        String s = "local t = {} pcall(function() for i = 1, 100000000 do t[i] = 'value ' .. i end end) return #t";
        byte[] body = s.getBytes(StandardCharsets.UTF_8);
        long[] seen = new long[1];
        String result = CompletableFuture.supplyAsync(() -> {
            ScriptRun run = new ScriptRun(Scripting.sha1hex(body), REPLIES, 0, allocated -> {
                seen[0] = allocated;
                return allocated < (32L << 20);
            });
            try {
                sandbox.run(LuaSandbox.compile(body), run, NONE, NONE);
                return "returned";
            } catch (CommandException e) {
                return e.getMessage();
            }
        }).get(60, TimeUnit.SECONDS);
        assertThat(result).startsWith("ERR script stopped: the JVM heap is nearly full");
        assertThat(seen[0]).as("stopped soon after").isBetween(32L << 20, 96L << 20);
        assertThat(Scripting.heapAllows(Scripting.HEAP_GUARD_MIN_ALLOCATION - 1)).isTrue();
        byte[] loop = "local i = 0 while i < 30000000 do i = i + 1 end return i".getBytes(StandardCharsets.UTF_8);
        LuaValue counted = CompletableFuture.supplyAsync(() -> sandbox.run(LuaSandbox.compile(loop),
                new ScriptRun(Scripting.sha1hex(loop), REPLIES, 0, Scripting::heapAllows), NONE, NONE))
                .get(120, TimeUnit.SECONDS);
        assertThat(counted.toint()).as("30 M iterations: hundreds of MiB of boxed numbers, all garbage")
                .isEqualTo(30_000_000);
    }

    @Test
    void repliesAndReadsAreBounded() {
        ByteBuf out = Unpooled.buffer();
        try {
            LuaValue big = LuaValue.valueOf(new byte[100]);
            assertThatThrownBy(() -> LuaReplies.write(out, big, 2, 64)).hasMessage("ERR script reply over 0 MiB");
        } finally {
            out.release();
        }
        // What redis.call captures of a command's reply stops at the script's remaining budget.
        io.kvtier.server.reply.Reply captured = io.kvtier.server.reply.Reply.capturing(
                io.netty.util.concurrent.ImmediateEventExecutor.INSTANCE, 16);
        captured.bulk(new byte[100]);
        assertThat(captured.takeCaptured()).isNull();
        assertThat(captured.overflowed()).isTrue();
        io.kvtier.server.reply.Reply small = io.kvtier.server.reply.Reply.capturing(
                io.netty.util.concurrent.ImmediateEventExecutor.INSTANCE, 16);
        small.integer(42);
        ByteBuf bytes = small.takeCaptured();
        assertThat(bytes.toString(StandardCharsets.UTF_8)).isEqualTo(":42\r\n");
        bytes.release();
    }

    @Test
    void runningScriptsShareOneBudgetOfHeldBytes() {
        Scripting scripting = new Scripting();
        try {
            assertThat(scripting.hold(Scripting.MAX_TOTAL_BYTES - 10)).isTrue();
            assertThat(scripting.available()).isEqualTo(10);
            assertThat(scripting.hold(11)).isFalse();
            assertThat(scripting.hold(10)).isTrue();
            scripting.release(Scripting.MAX_TOTAL_BYTES);
            assertThat(scripting.available()).isEqualTo(Scripting.MAX_TOTAL_BYTES);
        } finally {
            scripting.close();
        }
    }

    @Test
    void theScriptCacheDropsTheLeastRecentlyUsedPastItsCap() {
        ScriptCache cache = new ScriptCache();
        org.luaj.vm2.Prototype p = LuaSandbox.compile("return 1".getBytes(StandardCharsets.UTF_8));
        for (int i = 0; i <= ScriptCache.MAX_SCRIPTS; i++) {
            cache.put("sha" + i, p, 8);
            if (i == 0) {
                cache.put("keep", p, 8);
            }
            cache.get("keep"); // used all along
        }
        assertThat(cache.size()).isEqualTo(ScriptCache.MAX_SCRIPTS);
        assertThat(cache.contains("keep")).isTrue();
        assertThat(cache.contains("sha0")).isFalse();
        assertThat(cache.contains("sha1")).isFalse();
        cache.put("large", p, (int) ScriptCache.MAX_BYTES);
        assertThat(cache.bytes()).isLessThanOrEqualTo(ScriptCache.MAX_BYTES);
        assertThat(cache.contains("large")).isTrue();
        assertThat(cache.size()).isEqualTo(1);
        cache.clear();
        assertThat(cache.size()).isZero();
    }

    @Test
    void aScriptThatWroteCannotBeKilled() {
        ScriptRun run = new ScriptRun("sha", REPLIES, 0);
        run.wrote();
        assertThat(run.kill()).isFalse();
    }
}
