package io.kvtier.bench.load;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * Value bytes for SETs and the check of GET replies.
 *
 * <p>Without verification, every SET of a size sends the same direct buffer (one per size, filled once), as a
 * {@code retainedDuplicate()}: no per-request allocation or copy, so the client measures the server and not itself;
 * a reply is then only checked for its length. With verification every SET gets a fresh self-describing value
 * ({@link ValuePattern}: key hash, version, pseudo-random rest) and every GET reply is compared byte by byte, so
 * wrong bytes are counted, never silently accepted.
 *
 * <p>Thread-safe. Owns the shared buffers: {@link #close()} releases them, after the last request completed.
 */
public final class Payloads implements AutoCloseable {
    private final boolean verify;
    private final long seed;
    private final ConcurrentMap<Integer, ByteBuf> shared = new ConcurrentHashMap<>();

    public Payloads(boolean verify, long seed) {
        this.verify = verify;
        this.seed = seed;
    }

    public boolean verifies() {
        return verify;
    }

    /** A value of {@code size} bytes for {@code key}; the receiver owns (and the client releases) the buffer. */
    public ByteBuf value(byte[] key, long version, int size) {
        if (!verify) {
            return shared.computeIfAbsent(size, this::sharedBuffer).retainedDuplicate();
        }
        ByteBuf buf = ByteBufAllocator.DEFAULT.directBuffer(size, size);
        try {
            ValuePattern.fill(buf, ValuePattern.keyHash(key), version, size);
        } catch (RuntimeException e) {
            buf.release(); // a size without room for the header
            throw e;
        }
        return buf;
    }

    /** Bytes of a GET reply that are not what was stored under {@code key} (0 when all are right). */
    public long wrongBytes(byte[] key, int expectedSize, ByteBuf content) {
        if (!verify) {
            return Math.abs((long) content.readableBytes() - expectedSize);
        }
        return ValuePattern.wrongBytes(content, ValuePattern.keyHash(key), expectedSize);
    }

    private ByteBuf sharedBuffer(int size) {
        ByteBuf buf = Unpooled.directBuffer(size, size);
        if (size >= ValuePattern.HEADER) {
            ValuePattern.fill(buf, seed, size, size);
        } else {
            buf.writeZero(size);
        }
        return buf;
    }

    @Override
    public void close() {
        shared.values().forEach(ByteBuf::release);
        shared.clear();
    }
}
