package io.kvtier.server.value;

import io.kvtier.resp.BulkSink;
import io.kvtier.server.reply.CommandException;
import io.kvtier.store.disk.DirectWrite;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * A payload too large for the memory tier, copied from the socket into 1 MiB pooled chunks that are written to
 * disk in order off the event loop. While more than {@link #HIGH_BACKLOG} bytes wait for the disk, the connection
 * stops reading; {@code onDrained} resumes it. Event-loop confined (the write callbacks only count and signal).
 */
final class DiskSink implements BulkSink {
    static final long HIGH_BACKLOG = 8L << 20;
    private static final int CHUNK = 1 << 20;

    private final ByteBufAllocator alloc;
    private final Runnable onDrained;
    private DirectWrite write;
    private ByteBuf chunk;
    private long received;

    DiskSink(DirectWrite write, ByteBufAllocator alloc, Runnable onDrained) {
        this.write = write;
        this.alloc = alloc;
        this.onDrained = onDrained;
    }

    @Override
    public long length() {
        return write.length();
    }

    @Override
    public void write(ByteBuf src, int length) {
        while (length > 0) {
            if (chunk == null) {
                chunk = alloc.directBuffer((int) Math.min(CHUNK, write.length() - received));
            }
            int n = Math.min(length, chunk.writableBytes());
            chunk.writeBytes(src, n);
            received += n;
            length -= n;
            if (!chunk.isWritable()) {
                ByteBuf full = chunk;
                chunk = null;
                write.append(full.nioBuffer(), () -> {
                    full.release();
                    if (write != null && write.backlog() < HIGH_BACKLOG / 2) {
                        onDrained.run();
                    }
                });
            }
        }
    }

    /** Whether the disk is behind by more than the allowance: the connection should stop reading. */
    boolean backlogged() {
        return write != null && write.backlog() > HIGH_BACKLOG;
    }

    @Override
    public byte[] toBytes() {
        throw new CommandException("ERR argument of " + write.length() + " bytes is too large for this position");
    }

    /** Hands the direct write to the caller (the store commits it). */
    DirectWrite take() {
        DirectWrite w = write;
        write = null;
        return w;
    }

    @Override
    public void abort() {
        if (chunk != null) {
            chunk.release();
            chunk = null;
        }
        if (write != null) {
            write.abort();
            write = null;
        }
    }
}
