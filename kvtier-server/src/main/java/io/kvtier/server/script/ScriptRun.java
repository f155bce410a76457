package io.kvtier.server.script;

import java.util.concurrent.TimeUnit;
import org.luaj.vm2.LuaError;
import org.luaj.vm2.LuaValue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One execution of a script: what SCRIPT KILL looks at (how long it has run, whether it wrote) and asks of it, and
 * the bridge its {@code redis.call}s go through. Runs on a script thread; {@link #kill} comes from an event loop.
 */
public final class ScriptRun {
    private static final Logger log = LoggerFactory.getLogger(ScriptRun.class);

    /** Runs one {@code redis.call} or {@code redis.pcall} for the script (on its thread) and returns the reply. */
    @FunctionalInterface
    public interface Calls {
        /**
         * The reply of the command {@code args} (name first) as a Lua value (see {@link LuaReplies}); an error, the
         * command's or the script bridge's own (unknown command, key not declared), is an error table.
         */
        LuaValue call(byte[][] args);
    }

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();

    private final String sha;
    private final Calls calls;
    private final long busyNanos;
    private final long startNanos = System.nanoTime();
    /**
     * Told the bytes this script's thread has allocated since it started (garbage included); false when the script
     * must stop for the heap's sake (see {@link Scripting#heapAllows}).
     */
    private final java.util.function.LongPredicate heap;
    private volatile boolean wrote;
    private volatile boolean killRequested;
    private boolean warned;
    /** The error that stopped it for the heap's sake, raised again while it unwinds. */
    private LuaError stoppedForHeap;
    /** This thread's allocated bytes when the script started. */
    private final long allocatedAtStart;

    /** A run with no heap budget (tests of the interpreter alone). */
    public ScriptRun(String sha, Calls calls, long busyMillis) {
        this(sha, calls, busyMillis, n -> true);
    }

    /**
     * Created on the script thread that runs it: at every check of the hook, {@code heap} is told the bytes that
     * thread has allocated since (the JVM counts allocation, garbage included, not what stays live).
     */
    public ScriptRun(String sha, Calls calls, long busyMillis, java.util.function.LongPredicate heap) {
        this.sha = sha;
        this.calls = calls;
        this.busyNanos = TimeUnit.MILLISECONDS.toNanos(busyMillis);
        this.heap = heap;
        this.allocatedAtStart = THREADS.getCurrentThreadAllocatedBytes();
    }

    public String sha() {
        return sha;
    }

    Calls calls() {
        return calls;
    }

    /** The script is about to run a write command: from now on SCRIPT KILL cannot stop it. */
    public void wrote() {
        wrote = true;
    }

    public boolean hasWritten() {
        return wrote;
    }

    /** Whether it has run past the busy threshold (Redis's lua-time-limit): only then may SCRIPT KILL stop it. */
    public boolean busy() {
        return System.nanoTime() - startNanos >= busyNanos;
    }

    public long runningMillis() {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    /** Asks the script to stop (SCRIPT KILL); false if it has written and must run to its end. */
    public boolean kill() {
        if (wrote) {
            return false;
        }
        killRequested = true;
        return true;
    }

    /**
     * Called by the instruction hook now and then, on the script's thread: logs a slow script once; returns the error
     * that stops it (a kill was asked, or its allocations spent the scripts' heap budget), else null.
     */
    LuaError checkpoint() {
        if (!warned && busy()) {
            warned = true;
            log.warn("script {} has run for {} ms; other commands on its keys wait for it (SCRIPT KILL stops it if it"
                    + " has not written)", sha, runningMillis());
        }
        if (killRequested) {
            return ScriptClock.killed();
        }
        if (stoppedForHeap != null) {
            return stoppedForHeap; // unwinding: the heap is not looked at again
        }
        if (!heap.test(THREADS.getCurrentThreadAllocatedBytes() - allocatedAtStart)) {
            stoppedForHeap = new LuaError(LuaValue.tableOf(new LuaValue[] {LuaValue.valueOf("err"),
                    LuaValue.valueOf("ERR script stopped: the JVM heap is nearly full and this script is among what "
                            + "fills it (kvtier stops a script rather than run out of memory)")}));
            return stoppedForHeap;
        }
        return null;
    }
}
