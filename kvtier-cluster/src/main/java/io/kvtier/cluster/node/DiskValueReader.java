package io.kvtier.cluster.node;

import io.kvtier.store.ValueRef;
import io.netty.buffer.ByteBuf;
import java.util.concurrent.CompletableFuture;

/**
 * Reads a disk-resident value for {@link Replicator}. An interface so that this package does not depend on the
 * node's value I/O: the node passes its bounded disk-read pool in (never an event loop).
 */
@FunctionalInterface
public interface DiskValueReader {
    /**
     * {@code ref}'s value in a buffer the caller owns and releases, holding none of the read pool's staging; takes over
     * and closes {@code ref}. Fails with the store's exception.
     */
    CompletableFuture<ByteBuf> read(ValueRef ref);
}
