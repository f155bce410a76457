package io.kvtier.store.memory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A small memfd of its own, mapped shared: the segment a KVC.SHM client reads a token from to prove that it maps this
 * process's memory (same host, same user, a /proc it can see). Closed once; thread-safe.
 */
public final class SharedSegment implements AutoCloseable {
    private final Arena arena = Arena.ofShared();
    private final SlabSource.Shared shared;

    private SharedSegment(String name, long bytes) {
        this.shared = SlabSource.allocateShared(arena, bytes, name);
    }

    /**
     * @throws SlabMapException when this system cannot make shared memory
     */
    public static SharedSegment create(String name, long bytes) {
        return new SharedSegment(name, bytes);
    }

    public int fd() {
        return shared.fd();
    }

    public MemorySegment segment() {
        return shared.segment();
    }

    @Override
    public synchronized void close() {
        if (arena.scope().isAlive()) {
            arena.close();
        }
    }
}
