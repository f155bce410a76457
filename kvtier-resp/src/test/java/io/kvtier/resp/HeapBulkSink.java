package io.kvtier.resp;

import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** A heap-backed test sink that records every write and fails loudly on misuse (overfill, use after abort). */
final class HeapBulkSink implements BulkSink {
    final int argIndex;
    final List<Integer> writes = new ArrayList<>();
    private final byte[] data;
    private int filled;
    private boolean aborted;

    HeapBulkSink(int argIndex, long length) {
        this.argIndex = argIndex;
        this.data = new byte[Math.toIntExact(length)];
    }

    @Override
    public long length() {
        return data.length;
    }

    @Override
    public void write(ByteBuf src, int length) {
        if (aborted) {
            throw new AssertionError("write after abort");
        }
        if (length <= 0 || filled + length > data.length || src.readableBytes() < length) {
            throw new AssertionError("bad write of " + length + " at " + filled + "/" + data.length);
        }
        src.readBytes(data, filled, length);
        filled += length;
        writes.add(length);
    }

    @Override
    public byte[] toBytes() {
        if (filled != data.length || aborted) {
            throw new AssertionError("toBytes on an incomplete or aborted sink");
        }
        return data.clone();
    }

    @Override
    public void abort() {
        aborted = true;
    }

    boolean isAborted() {
        return aborted;
    }

    int filled() {
        return filled;
    }

    byte[] filledBytes() {
        return Arrays.copyOf(data, filled);
    }
}
