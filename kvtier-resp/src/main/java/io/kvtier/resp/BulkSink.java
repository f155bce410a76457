package io.kvtier.resp;

import io.netty.buffer.ByteBuf;

/**
 * A destination for one large bulk-string payload, filled by the decoder as bytes arrive. The decoder owns a
 * sink until it hands the finished command out; then the command's consumer owns it and must either take its
 * contents or {@link #abort()} it. Not thread-safe.
 */
public interface BulkSink {
    /** Total payload length this sink was opened for. */
    long length();

    /** Copies exactly {@code length} readable bytes from {@code src}, advancing its reader index. */
    void write(ByteBuf src, int length);

    /** The whole payload as a heap array, for arguments a command needs as bytes (keys, small options). */
    byte[] toBytes();

    /** Releases whatever the sink reserved; called on errors, closed connections and unused arguments. Idempotent. */
    void abort();
}
