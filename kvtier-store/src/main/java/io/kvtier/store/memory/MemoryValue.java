package io.kvtier.store.memory;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import io.kvtier.store.ref.RefCount;

/**
 * The off-heap bytes of one value: a sequence of page or chunk segments. Reference-counted: the creator holds the
 * first reference; the bytes return to the {@link MemoryTier} when the last reference is released, never before.
 * Filling ({@link #write}) is single-threaded and happens before the value is published.
 */
public final class MemoryValue {
    private final MemoryTier tier;
    private final long length;
    private final MemorySegment[] parts;
    final int[] pages;          // whole pages owned (large values), else null
    final SmallPage smallPage;  // the size-class page holding this value's chunk (small values), else null
    final int chunk;
    private final RefCount refs;
    private long written;

    MemoryValue(MemoryTier tier, long length, MemorySegment[] parts, int[] pages, SmallPage smallPage, int chunk) {
        this.tier = tier;
        this.length = length;
        this.parts = parts;
        this.pages = pages;
        this.smallPage = smallPage;
        this.chunk = chunk;
        this.refs = new RefCount(() -> tier.free(this));
    }

    public long length() {
        return length;
    }

    /** Bytes of the budget this value occupies (whole pages, or its chunk size). */
    public long footprint() {
        return pages != null ? (long) pages.length * MemoryTier.PAGE_SIZE : smallPage == null ? 0 : smallPage.chunkSize;
    }

    /** Bytes filled so far by {@link #write}. */
    public long written() {
        return written;
    }

    /**
     * Copies {@code src}'s remaining bytes into the value at the current write position.
     *
     * @throws IllegalStateException if that would overflow the value
     */
    public void write(ByteBuffer src) {
        if (src.remaining() > length - written) {
            throw new IllegalStateException("write of " + src.remaining() + " bytes overflows value of " + length);
        }
        while (src.hasRemaining()) {
            ByteBuffer dst = window(src.remaining());
            int n = dst.remaining();
            dst.put(src.slice(src.position(), n));
            src.position(src.position() + n);
            written += n;
        }
    }

    /**
     * The unwritten rest of the page (or chunk) at the write position, at most {@code max} bytes, to be filled in
     * place and then counted with {@link #advance}; {@code null} once the value is full.
     */
    public ByteBuffer window(int max) {
        if (max < 1) {
            throw new IllegalArgumentException("window of " + max + " bytes");
        }
        if (written == length) {
            return null;
        }
        MemorySegment part = partAt(written);
        long inPart = written - partStart(written);
        return part.asSlice(inPart, Math.min(max, part.byteSize() - inPart)).asByteBuffer();
    }

    /** Counts {@code n} bytes filled in place through the last {@link #window} as written. */
    public void advance(int n) {
        if (n < 0 || n > length - written) {
            throw new IllegalStateException("advance of " + n + " bytes overflows value of " + length + " with "
                    + written + " written");
        }
        written += n;
    }

    /** Copies all of {@code bytes}; see {@link #write(ByteBuffer)}. */
    public void write(byte[] bytes) {
        write(ByteBuffer.wrap(bytes));
    }

    private MemorySegment partAt(long offset) {
        return parts[(int) (offset / MemoryTier.PAGE_SIZE)];
    }

    private static long partStart(long offset) {
        return offset / MemoryTier.PAGE_SIZE * MemoryTier.PAGE_SIZE;
    }

    /** Views of the bytes, in order, for gathering writes to a socket or file; callers must not write through them. Caller holds a reference. */
    public ByteBuffer[] buffers() {
        ByteBuffer[] out = new ByteBuffer[parts.length];
        for (int i = 0; i < parts.length; i++) {
            out[i] = parts[i].asByteBuffer();
        }
        return out;
    }

    /** Copies the whole value to a new heap array (small values and tests). Caller holds a reference. */
    public byte[] toArray() {
        byte[] out = new byte[Math.toIntExact(length)];
        long pos = 0;
        for (MemorySegment part : parts) {
            MemorySegment.copy(part, java.lang.foreign.ValueLayout.JAVA_BYTE, 0, out, (int) pos, (int) part.byteSize());
            pos += part.byteSize();
        }
        return out;
    }

    /** Adds a reference unless the value was already freed; returns whether it did. */
    public boolean tryRetain() {
        return refs.tryRetain();
    }

    /** Drops a reference; the last one returns the bytes to the tier. */
    public void release() {
        refs.release();
    }

    int refCount() {
        return refs.count();
    }
}
