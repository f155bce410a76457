package io.kvtier.store.ref;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A reference count that starts at one (the owner's) and runs {@code onZero} exactly once, when the last reference
 * is released. Once it has reached zero it can never be retained again. Thread-safe, lock-free.
 */
public final class RefCount {
    private final AtomicInteger refs = new AtomicInteger(1);
    private final Runnable onZero;

    public RefCount(Runnable onZero) {
        this.onZero = onZero;
    }

    /** Adds a reference unless the count already reached zero; returns whether it did. */
    public boolean tryRetain() {
        for (int r = refs.get(); r > 0; r = refs.get()) {
            if (refs.compareAndSet(r, r + 1)) {
                return true;
            }
        }
        return false;
    }

    /** Drops a reference; the last one runs the release action. */
    public void release() {
        int r = refs.decrementAndGet();
        if (r == 0) {
            onZero.run();
        } else if (r < 0) {
            throw new IllegalStateException("released more often than retained");
        }
    }

    public int count() {
        return refs.get();
    }
}
