package io.kvtier.server.script;

import io.kvtier.server.command.CommandException;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.luaj.vm2.Prototype;

/**
 * A node's scripting: the script cache, the script threads (scripts never run on an event loop: they may wait for
 * their commands' replies) each with its own sandboxed interpreter, and the runs in progress for SCRIPT KILL.
 */
public final class Scripting implements AutoCloseable {
    /**
     * The most bytes one script may hold on the heap: its arguments and what it reads through redis.call together,
     * and, apart, the largest reply it may return.
     */
    public static final long MAX_SCRIPT_BYTES = 64L << 20;
    /**
     * The most bytes all running scripts hold together (arguments and values read): a quarter of the heap, at most
     * 256 MiB, so that a few large scripts at once cannot exhaust the heap.
     */
    public static final long MAX_TOTAL_BYTES = Math.min(256L << 20, Runtime.getRuntime().maxMemory() / 4);
    /** Redis's lua-time-limit default: a script running longer is busy; SCRIPT KILL may then stop it. */
    public static final long BUSY_MILLIS = 5_000;
    /** Scripts running at once (on distinct keys); more wait for a thread. */
    public static final int THREADS = Math.max(2, Math.min(8, Runtime.getRuntime().availableProcessors()));
    /** Lua calls recurse on the Java stack. */
    private static final long THREAD_STACK_BYTES = 8L << 20;

    private final ScriptCache cache = new ScriptCache();
    private final Set<ScriptRun> running = ConcurrentHashMap.newKeySet();
    private final ThreadLocal<LuaSandbox> sandboxes = ThreadLocal.withInitial(LuaSandbox::new);
    private final ExecutorService threads;
    private final java.util.concurrent.atomic.AtomicLong heldBytes = new java.util.concurrent.atomic.AtomicLong();

    public Scripting() {
        AtomicInteger n = new AtomicInteger();
        // The queue is bounded by the clients: each waits for its one script before sending another command.
        threads = new ThreadPoolExecutor(THREADS, THREADS, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(),
                r -> {
                    Thread t = new Thread(null, r, "kvtier-script-" + n.incrementAndGet(), THREAD_STACK_BYTES);
                    t.setDaemon(true);
                    return t;
                });
    }

    public ScriptCache cache() {
        return cache;
    }

    /** Runs {@code task} on a script thread. */
    public <T> CompletableFuture<T> submit(Supplier<T> task) {
        return CompletableFuture.supplyAsync(task, threads);
    }

    /** This script thread's interpreter. */
    public LuaSandbox sandbox() {
        return sandboxes.get();
    }

    /** The compiled script for {@code body}, compiled and cached if new; on a script thread (compiling takes time). */
    public Prototype compile(String sha, byte[] body) {
        Prototype p = cache.get(sha);
        if (p == null) {
            p = LuaSandbox.compile(body);
            cache.put(sha, p, body.length);
        }
        return p;
    }

    /** Runs {@code p} as {@code run} on this script thread's interpreter, visible to SCRIPT KILL meanwhile. */
    public org.luaj.vm2.LuaValue run(Prototype p, ScriptRun run, byte[][] keys, byte[][] argv) {
        running.add(run);
        try {
            return sandbox().run(p, run, keys, argv);
        } finally {
            running.remove(run);
        }
    }

    /**
     * SCRIPT KILL: stops every script that has been busy (run past {@link #BUSY_MILLIS}, as Redis hears SCRIPT KILL
     * only then) and has not written. NOTBUSY when none is busy, UNKILLABLE when every busy one has written.
     */
    public void kill() {
        boolean busy = false;
        boolean killed = false;
        for (ScriptRun r : running) {
            if (r.busy()) {
                busy = true;
                killed |= r.kill();
            }
        }
        if (!busy) {
            throw new CommandException("NOTBUSY No scripts in execution right now.");
        }
        if (!killed) {
            throw new CommandException("UNKILLABLE Sorry the script already executed write commands against the "
                    + "dataset. You can either wait the script termination or kill the server in a hard way using the "
                    + "SHUTDOWN NOSAVE command.");
        }
    }

    /**
     * Takes {@code n} bytes of {@link #MAX_TOTAL_BYTES} for a script (its arguments, a value it read); false, taking
     * nothing, when that would go over.
     */
    public boolean hold(long n) {
        long now;
        do {
            now = heldBytes.get();
            if (now + n > MAX_TOTAL_BYTES) {
                return false;
            }
        } while (!heldBytes.compareAndSet(now, now + n));
        return true;
    }

    /** Gives back bytes taken with {@link #hold}. */
    public void release(long n) {
        heldBytes.addAndGet(-n);
    }

    /** What {@link #hold} would still grant. */
    public long available() {
        return Math.max(0, MAX_TOTAL_BYTES - heldBytes.get());
    }

    @Override
    public void close() {
        threads.shutdownNow();
    }

    /** The SHA1 of a script body, lower-case hex, as Redis names scripts. */
    public static String sha1hex(byte[] body) {
        return RedisLib.sha1hex(body);
    }
}
