package io.kvtier.server.script;

import java.util.concurrent.TimeUnit;
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

    private final String sha;
    private final Calls calls;
    private final long busyNanos;
    private final long startNanos = System.nanoTime();
    private volatile boolean wrote;
    private volatile boolean killRequested;
    private boolean warned;

    public ScriptRun(String sha, Calls calls, long busyMillis) {
        this.sha = sha;
        this.calls = calls;
        this.busyNanos = TimeUnit.MILLISECONDS.toNanos(busyMillis);
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

    /** Called by the instruction hook now and then: logs a slow script once; true once a kill was asked. */
    boolean checkpoint() {
        if (!warned && busy()) {
            warned = true;
            log.warn("script {} has run for {} ms; other commands on its keys wait for it (SCRIPT KILL stops it if it"
                    + " has not written)", sha, runningMillis());
        }
        return killRequested;
    }
}
