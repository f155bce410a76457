package io.kvtier.store.disk;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;

/**
 * A value too large for the memory tier, streamed straight into a file of its own while it arrives. The value
 * lands at a fixed offset that leaves room for the largest header and key in front of it; on {@link #seal} the
 * real header and key are written just before the value and a padding record fills the gap, so the file becomes an
 * ordinary one-record region. Chunks are written in order on an I/O executor, never on the caller's thread.
 * {@link #append} and {@link #finish} are for one producer thread; the rest is called by the tier.
 */
public final class DirectWrite {
    /** Where the value starts in its file: room for the largest key, two headers and the padding's trailer. */
    public static final long VALUE_OFFSET = 2L * RecordFormat.HEADER_SIZE + RecordFormat.TRAILER_SIZE
            + RecordFormat.MAX_KEY_LENGTH;

    private final Path file;
    private final FileChannel channel;
    private final long length;
    private final Executor io;
    private final CRC32C crc = new CRC32C();           // I/O thread only, in chunk order
    private final AtomicLong backlog = new AtomicLong();
    private long appended;                             // producer thread
    private CompletableFuture<Void> tail = CompletableFuture.completedFuture(null);
    private volatile boolean aborted;
    private volatile boolean adopted;
    private volatile Throwable failure;

    DirectWrite(Path file, long length, Executor io) throws IOException {
        this.file = file;
        this.length = length;
        this.io = io;
        this.channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
    }

    public long length() {
        return length;
    }

    /** Bytes handed over but not yet written; the producer should stop reading while this is high. */
    public long backlog() {
        return backlog.get();
    }

    /**
     * Queues {@code chunk} (the next bytes of the value) for writing; {@code written} runs once it is written or
     * dropped, after which the caller may reuse the chunk's memory.
     */
    public void append(ByteBuffer chunk, Runnable written) {
        long position = VALUE_OFFSET + appended;
        int n = chunk.remaining();
        if (appended + n > length) {
            written.run();
            throw new IllegalStateException("direct write overflows its value of " + length + " bytes");
        }
        appended += n;
        backlog.addAndGet(n);
        // Each stage runs whatever happened before it, so every chunk's callback runs and its memory comes back even
        // after a failed write; the first failure is kept and reported by finish().
        tail = tail.handleAsync((v, previous) -> {
            try {
                if (!aborted && failure == null) {
                    crc.update(chunk.duplicate());
                    writeFully(chunk.duplicate(), position);
                }
            } catch (IOException | RuntimeException e) {
                failure = e;
            } finally {
                backlog.addAndGet(-n);
                written.run();
            }
            return null;
        }, io);
    }

    /** Completes when every appended chunk is written; fails if the value is incomplete or a write failed. */
    public CompletableFuture<Void> finish() {
        if (appended != length) {
            return CompletableFuture.failedFuture(new IllegalStateException("direct write has " + appended
                    + " of " + length + " bytes"));
        }
        return tail.thenCompose(v -> failure == null ? CompletableFuture.completedFuture(null)
                : CompletableFuture.failedFuture(failure));
    }

    /**
     * Writes the padding record, header and key in front of the value and its trailer after it (after
     * {@link #finish} completed). Returns the record's offset in the file.
     */
    long seal(byte[] key, long seq, long written, long expireAt, long version) throws IOException {
        if (key.length > RecordFormat.MAX_KEY_LENGTH) {
            throw new IllegalArgumentException("key of " + key.length + " bytes is longer than "
                    + RecordFormat.MAX_KEY_LENGTH);
        }
        long recordStart = VALUE_OFFSET - RecordFormat.HEADER_SIZE - key.length;
        int padding = (int) (recordStart - RecordFormat.HEADER_SIZE - RecordFormat.TRAILER_SIZE);
        CRC32C padCrc = new CRC32C();
        padCrc.update(ByteBuffer.allocate(padding));
        ByteBuffer padHeader = ByteBuffer.allocate(RecordFormat.HEADER_SIZE);
        RecordFormat.writeHeader(padHeader, (int) padCrc.getValue(), 0, written, 0, new byte[0], padding,
                RecordFormat.TYPE_PADDING, 0);
        ByteBuffer padTrailer = ByteBuffer.allocate(RecordFormat.TRAILER_SIZE);
        RecordFormat.writeTrailer(padTrailer, 0, new byte[0], 0, padding, RecordFormat.TYPE_PADDING);
        writeFully(padHeader.clear(), 0);
        writeFully(ByteBuffer.allocate(padding), RecordFormat.HEADER_SIZE);
        writeFully(padTrailer.clear(), RecordFormat.HEADER_SIZE + padding);
        ByteBuffer header = ByteBuffer.allocate(RecordFormat.HEADER_SIZE);
        RecordFormat.writeHeader(header, (int) crc.getValue(), seq, written, expireAt, key, Math.toIntExact(length),
                RecordFormat.TYPE_VALUE, version);
        ByteBuffer trailer = ByteBuffer.allocate(RecordFormat.TRAILER_SIZE);
        RecordFormat.writeTrailer(trailer, seq, key, key.length, length, RecordFormat.TYPE_VALUE);
        writeFully(header.clear(), recordStart);
        writeFully(ByteBuffer.wrap(key), recordStart + RecordFormat.HEADER_SIZE);
        writeFully(trailer.clear(), VALUE_OFFSET + length);
        return recordStart;
    }

    Path file() {
        return file;
    }

    FileChannel channel() {
        return channel;
    }

    /** Total file size once sealed. */
    long fileSize() {
        return VALUE_OFFSET + length + RecordFormat.TRAILER_SIZE;
    }

    private void writeFully(ByteBuffer buf, long position) throws IOException {
        while (buf.hasRemaining()) {
            position += channel.write(buf, position);
        }
    }

    /** Marks the file as the disk tier's own region: {@link #abort()} no longer touches it. */
    void adopted() {
        adopted = true;
    }

    /**
     * Drops the value: pending chunks are released unwritten and the file is deleted once they are done. A no-op
     * once the disk tier adopted the file as a region.
     */
    public void abort() {
        if (adopted) {
            return;
        }
        aborted = true;
        tail.whenComplete((v, e) -> {
            try {
                channel.close();
                Files.deleteIfExists(file);
            } catch (IOException ignored) {
                // a leftover temp file is deleted at the next start-up
            }
        });
    }
}
