package io.kvtier.bench.load;

/**
 * The requests of a phase, by index from 0. Called concurrently by every lane, so implementations are thread-safe
 * (stateless, or synchronized where a workload has state, like LMCache's conversations).
 */
@FunctionalInterface
public interface TaskSource {
    /** The request with this index, or null when the phase has no more requests. */
    Task task(long index);
}
