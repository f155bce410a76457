package io.kvtier.server.fatal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Why: an OutOfMemoryError used to kill the event-loop threads one by one while the process lived on, accepting TCP
 * connections it never answered and ignoring SIGTERM (issue 10). An Error on a thread that serves clients leaves state
 * nobody can vouch for, so the process stops: System.exit runs the shutdown hook, which writes the memory tier to disk
 * when it can. The heap may be full when it runs (an OutOfMemoryError thrown from a lambda-based uncaught-exception
 * handler left exactly such a zombie), so it is written to need no allocation: it drops a reserve of heap held for
 * this moment first, the exit and watchdog threads exist before any Error, no lambda or VarHandle is linked on this
 * path, the log line is attempted only after the exit has started, and if even starting a thread fails, or the
 * graceful stop has not ended within HALT_AFTER_MILLIS, the process halts.
 */

/**
 * Stops the process, once, when an {@code Error} reaches a thread that serves clients; also the process's default
 * uncaught-exception handler. Thread-safe.
 */
public final class FatalErrorHandler implements Thread.UncaughtExceptionHandler {
    /** Where an Error was caught: constants made at class initialization, since a string literal is made on first use. */
    public enum Source {
        CLIENT_CONNECTION("a client connection's event loop"),
        STATISTICS("the accept loop sampling INFO's rates"),
        THREAD("a thread that died of it");

        private final String description;

        Source(String description) {
            this.description = description;
        }

        @Override
        public String toString() {
            return description;
        }
    }

    /** The exit code: EX_SOFTWARE, an internal software error. */
    public static final int EXIT_CODE = 70;
    /** Longest the graceful stop may take after a fatal error before the process halts. */
    static final long HALT_AFTER_MILLIS = 120_000;
    private static final Logger log = LoggerFactory.getLogger(FatalErrorHandler.class);

    /** Heap given up when an Error arrives, so that the way out can allocate: 1/64 of the heap, at least 1 MiB. */
    private volatile byte[] reserve = new byte[(int) Math.min(64 << 20,
            Math.max(1 << 20, Runtime.getRuntime().maxMemory() / 64))];
    private boolean fired; // guarded by this
    private final Thread exit = new Thread(new Exit(), "kvtier-fatal-exit");
    private final Thread watchdog = new Thread(new Watchdog(), "kvtier-fatal-watchdog");

    public FatalErrorHandler() {
        Source.values(); // initialized now: initializing a class on the way out would allocate
        exit.setDaemon(true);
        watchdog.setDaemon(true);
    }

    /** Whether an Error has been reported (the process is stopping). */
    public synchronized boolean fired() {
        return fired;
    }

    @Override
    public void uncaughtException(Thread thread, Throwable e) {
        if (e instanceof Error) {
            reserve = null; // before anything that might allocate
            handle(Source.THREAD, e);
        } else {
            log.error("thread {} died", thread.getName(), e);
        }
    }

    /** Stops the process because {@code error} reached {@code where}. */
    public void handle(Source where, Throwable error) {
        reserve = null;
        synchronized (this) {
            if (fired) {
                return;
            }
            fired = true;
        }
        try {
            watchdog.start();
            exit.start();
        } catch (Throwable cannotStart) {
            Runtime.getRuntime().halt(EXIT_CODE);
        }
        try {
            log.error("fatal {} on {}: stopping the process (exit code {}) with a graceful shutdown", error, where,
                    EXIT_CODE, error);
        } catch (Throwable cannotLog) {
            // the heap may be full; the exit is under way regardless
        }
    }

    /** Runs the shutdown hooks (the graceful stop). */
    private static final class Exit implements Runnable {
        @Override
        public void run() {
            System.exit(EXIT_CODE);
        }
    }

    /** Halts the process if the graceful stop has not ended in time. */
    private static final class Watchdog implements Runnable {
        @Override
        public void run() {
            try {
                Thread.sleep(HALT_AFTER_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            Runtime.getRuntime().halt(EXIT_CODE);
        }
    }
}
