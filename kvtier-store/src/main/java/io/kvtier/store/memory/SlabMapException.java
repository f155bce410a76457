package io.kvtier.store.memory;

/**
 * The system refused to map a memory-tier slab (out of address space or memory: see {@code ulimit -v} and
 * {@code vm.overcommit_memory}). The write that needed it fails; the tier's bookkeeping is unchanged.
 */
public final class SlabMapException extends RuntimeException {
    SlabMapException(String message, Throwable cause) {
        super(message, cause);
    }
}
