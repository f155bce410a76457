package io.kvtier.server.script;

import io.kvtier.server.reply.CommandException;
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
    /** Scripts submitted and not finished: running on a thread or waiting for one. */
    private final AtomicInteger inFlight = new AtomicInteger();
    /** lua-time-limit (busy-reply-threshold): a script running longer is busy. CONFIG SET changes it for new runs. */
    private volatile long busyMillis = BUSY_MILLIS;

    /** Redis's -BUSY, for a script that finds every script thread held and a busy script among them. */
    public static final String BUSY = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or "
            + "SHUTDOWN NOSAVE.";

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

    /**
     * Runs a script on a script thread; answers {@link #BUSY} at once instead when every thread is held (with
     * scripts waiting or not) and a script running has been busy past lua-time-limit: it would wait until SCRIPT KILL
     * or the script's end, and Redis answers -BUSY then. Scripts still under the limit are waited for.
     */
    public <T> CompletableFuture<T> submitScript(Supplier<T> task) {
        if (inFlight.get() >= THREADS && running.stream().anyMatch(ScriptRun::busy)) {
            return CompletableFuture.failedFuture(new CommandException(BUSY));
        }
        inFlight.incrementAndGet();
        try {
            return CompletableFuture.supplyAsync(task, threads).whenComplete((x, e) -> inFlight.decrementAndGet());
        } catch (RuntimeException e) {
            inFlight.decrementAndGet();
            throw e;
        }
    }

    public long busyMillis() {
        return busyMillis;
    }

    /** CONFIG SET lua-time-limit / busy-reply-threshold: milliseconds, 0 or more. */
    public void busyMillis(long millis) {
        if (millis < 0) {
            throw new IllegalArgumentException("lua-time-limit " + millis + " is negative");
        }
        busyMillis = millis;
    }

    /** This script thread's interpreter. */
    public LuaSandbox sandbox() {
        return sandboxes.get();
    }

    /** The compiled script for {@code body}, compiled and cached if new; on a script thread (compiling takes time). */
    public Prototype compile(String sha, byte[] body) {
        Prototype p = cache.get(sha);
        if (p == null) {
            ScriptFlags flags = ScriptFlags.of(body);
            byte[] source = body;
            if (flags.length() > 0) { // the shebang compiled as a blank line: line numbers stay the script's
                source = body.clone();
                java.util.Arrays.fill(source, 0, flags.length(), (byte) ' ');
            }
            p = LuaSandbox.compile(source);
            cache.put(sha, p, body.length, flags);
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

    /** A script that has allocated less than this since it started is never stopped for the heap's sake. */
    static final long HEAP_GUARD_MIN_ALLOCATION = 64L << 20;
    /** The share of the maximum heap in use past which a script allocating more is stopped. */
    static final double HEAP_GUARD_FULL = 0.85;

    /**
     * Whether a script whose thread has allocated {@code allocated} bytes since it started may go on. Lua's own
     * memory (tables, strings a script builds) has no budget of its own, and what a script keeps cannot be told from
     * its garbage (LuaJ boxes numbers: a counting loop allocates gigabytes of garbage and keeps nothing); so a script
     * is stopped only when the heap's old generation (what survived collections) fills 85% of the maximum heap, still
     * after a full collection (at most one a second, or the first after a script was stopped), and the script has allocated at least 64 MiB: a script building a huge table fails with an error instead of the node
     * running out of memory, and a long loop is not stopped.
     */
    public static boolean heapAllows(long allocated) {
        if (allocated < HEAP_GUARD_MIN_ALLOCATION) {
            return true;
        }
        if (!heapNearlyFull()) {
            return true;
        }
        // The old generation may be full of garbage (a big script that was stopped, say): collect, at most once a
        // second unless a script was stopped since, and look again. A stop-the-world pause, only when the heap is
        // this full; running out is worse.
        long now = System.nanoTime();
        long last = lastCollection.get();
        if ((collectNext || now - last >= HEAP_GUARD_COLLECT_NANOS) && lastCollection.compareAndSet(last, now)) {
            collectNext = false;
            System.gc();
            if (!heapNearlyFull()) {
                return true;
            }
        }
        collectNext = true; // this script is stopped: what it held is garbage once it unwinds
        return false;
    }

    private static boolean heapNearlyFull() {
        Runtime rt = Runtime.getRuntime();
        // The old generation, not the whole heap: a young generation full of garbage is no sign of a full heap.
        long used = OLD_GENERATION != null ? OLD_GENERATION.getUsage().getUsed() : rt.totalMemory() - rt.freeMemory();
        return used >= HEAP_GUARD_FULL * rt.maxMemory();
    }

    private static final long HEAP_GUARD_COLLECT_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(1);
    private static volatile boolean collectNext;
    private static final java.util.concurrent.atomic.AtomicLong lastCollection =
            new java.util.concurrent.atomic.AtomicLong(System.nanoTime() - HEAP_GUARD_COLLECT_NANOS);

    /** The collector's old-generation pool (G1 Old Gen, Tenured Gen, ...), or null if it has none by that name. */
    private static final java.lang.management.MemoryPoolMXBean OLD_GENERATION =
            java.lang.management.ManagementFactory.getMemoryPoolMXBeans().stream()
                    .filter(p -> p.getType() == java.lang.management.MemoryType.HEAP)
                    .filter(p -> p.getName().contains("Old") || p.getName().contains("Tenured"))
                    .findFirst().orElse(null);

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
