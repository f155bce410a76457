package io.kvtier.resp;

import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;

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

    /**
     * Where the next bytes of the payload go, at most {@code max} of them, for a caller that puts them there itself (a
     * socket read straight into the destination saves copying them); {@code null} when this sink has no such memory.
     * The caller then reports what it put there with {@link #advance}.
     */
    default ByteBuffer window(int max) {
        return null;
    }

    /** Counts {@code n} bytes put into the last {@link #window} as written. */
    default void advance(int n) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " has no window");
    }

    /** The whole payload as a heap array, for arguments a command needs as bytes (keys, small options). */
    byte[] toBytes();

    /** Releases whatever the sink reserved; called on errors, closed connections and unused arguments. Idempotent. */
    void abort();
}
