package io.kvtier.bench.fleet;

import java.util.concurrent.locks.LockSupport;

/**
 * Waits for a time on the pacers' clock. It may return early (woken by {@link LockSupport#unpark}, or spuriously):
 * callers look at the clock again and sleep again while it is too soon. A test gives a fake one that moves its fake
 * clock to the deadline, so a schedule runs instantly and every send time can be checked exactly.
 */
@FunctionalInterface
interface Sleeper {
    /** Sleeps until {@code deadlineNanos} on the pacer's clock, or less. */
    void sleepUntil(long deadlineNanos) throws InterruptedException;

    /** Parks the calling thread until {@code deadlineNanos} of {@link System#nanoTime()}; unpark wakes it early. */
    static Sleeper system() {
        return deadline -> {
            long wait = deadline - System.nanoTime();
            if (wait > 0) {
                LockSupport.parkNanos(wait);
            }
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
        };
    }
}
