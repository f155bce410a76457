package io.kvtier.server.value;

import io.kvtier.resp.BulkSink;
import io.kvtier.store.memory.MemoryValue;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;

/** A bulk payload streamed straight into memory reserved from the store's budget. Owns one value reference. */
final class MemorySink implements BulkSink {
    private MemoryValue value;

    MemorySink(MemoryValue value) {
        this.value = value;
    }

    @Override
    public long length() {
        return value.length();
    }

    @Override
    public void write(ByteBuf src, int length) {
        int end = src.readerIndex() + length;
        for (ByteBuffer part : src.nioBuffers(src.readerIndex(), length)) {
            value.write(part);
        }
        src.readerIndex(end);
    }

    @Override
    public ByteBuffer window(int max) {
        return value.window(max);
    }

    @Override
    public void advance(int n) {
        value.advance(n);
    }

    @Override
    public byte[] toBytes() {
        return value.toArray();
    }

    /** Hands the filled value to the caller, who now owns its reference. */
    MemoryValue take() {
        MemoryValue v = value;
        value = null;
        return v;
    }

    @Override
    public void abort() {
        if (value != null) {
            value.release();
            value = null;
        }
    }
}
