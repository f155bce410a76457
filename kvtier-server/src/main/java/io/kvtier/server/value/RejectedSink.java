package io.kvtier.server.value;

import io.kvtier.resp.BulkSink;
import io.netty.buffer.ByteBuf;

/**
 * Swallows a payload the store refused (too large for a tier, memory stuck full), so the command can be answered
 * with the store's error while the connection stays usable.
 */
final class RejectedSink implements BulkSink {
    private final long length;
    final String error;

    RejectedSink(long length, String error) {
        this.length = length;
        this.error = error;
    }

    @Override
    public long length() {
        return length;
    }

    @Override
    public void write(ByteBuf src, int length) {
        src.skipBytes(length);
    }

    @Override
    public byte[] toBytes() {
        throw new IllegalStateException(error);
    }

    @Override
    public void abort() {
    }
}
