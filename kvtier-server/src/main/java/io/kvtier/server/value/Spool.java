package io.kvtier.server.value;

import io.kvtier.store.memory.MemoryValue;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A file that holds the payloads of one request that did not fit its memory caps, appended in arrival order and read
 * back into store memory when the command runs. Deleted when the last {@link SpoolSink} in it and the request that
 * filled it are done (reference counted). Appends come from the connection's event loop; reads and releases from any
 * thread.
 */
final class Spool {
    private final Path file;
    private final FileChannel channel;
    private final AtomicInteger refs = new AtomicInteger(1); // the request filling it
    private long size;                                       // event loop only

    Spool(Path file) {
        this.file = file;
        try {
            this.channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                    StandardOpenOption.WRITE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create spool file " + file, e);
        }
    }

    /** Reserves room for a payload of {@code length} bytes at the end; returns where it starts. */
    long allot(long length) {
        refs.incrementAndGet();
        long at = size;
        size += length;
        return at;
    }

    /** Copies {@code n} readable bytes of {@code src} to {@code position}, advancing its reader index. */
    void write(ByteBuf src, int n, long position) {
        try {
            int written = 0;
            while (written < n) {
                written += src.getBytes(src.readerIndex() + written, channel, position + written, n - written);
            }
            src.skipBytes(n);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write spool file " + file, e);
        }
    }

    /** Reads {@code length} bytes at {@code position}. */
    byte[] read(long position, int length) {
        ByteBuffer buf = ByteBuffer.allocate(length);
        readFully(buf, position);
        return buf.array();
    }

    /** Fills {@code value} from {@code position}, 64 KiB at a time. */
    void readInto(long position, MemoryValue value) {
        ByteBuffer buf = ByteBuffer.allocate((int) Math.min(64 << 10, value.length()));
        long done = 0;
        while (done < value.length()) {
            buf.clear().limit((int) Math.min(buf.capacity(), value.length() - done));
            readFully(buf, position + done);
            done += buf.flip().remaining();
            value.write(buf);
        }
    }

    private void readFully(ByteBuffer buf, long position) {
        try {
            while (buf.hasRemaining()) {
                if (channel.read(buf, position + buf.position()) < 0) {
                    throw new IOException("spool file " + file + " ends before " + (position + buf.limit()));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Drops one reference; the last one closes and deletes the file. */
    void release() {
        if (refs.decrementAndGet() == 0) {
            try {
                channel.close();
                Files.deleteIfExists(file);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot delete spool file " + file, e);
            }
        }
    }
}
