package io.kvtier.store.memory;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;

/**
 * The off-heap bytes of one value: a chunk of a size-class page (small values) or a sequence of whole pages.
 * Reference-counted: the creator holds the first reference; the bytes return to the {@link MemoryTier} when the last
 * reference is released, never before. Filling ({@link #write}) is single-threaded and happens before the value is
 * published.
 *
 * <p>One exists per key in memory, so it is kept small (40 bytes of heap, issue 10): the count is an int field
 * updated through a {@link VarHandle} rather than a {@code RefCount} with its own atomic and release action, and a
 * value keeps no segments of its own: its slices of the pages are cut when the bytes are read or written.
 */
public final class MemoryValue {
    private static final VarHandle REFS;

    static {
        try {
            REFS = MethodHandles.lookup().findVarHandle(MemoryValue.class, "refs", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final MemoryTier tier;
    private final int length;          // values in memory are below 2 GiB (StoreOptions.MAX_VALUE)
    final int[] pages;                 // whole pages owned (large values), else null
    final SmallPage smallPage;         // the size-class page holding this value's chunk (small values), else null
    final int chunk;
    @SuppressWarnings("unused")        // through REFS
    private volatile int refs = 1;
    private int written;

    /** A large (or empty) value made of whole pages. */
    MemoryValue(MemoryTier tier, long length, int[] pages) {
        this(tier, length, pages, null, 0);
    }

    /** A small value in chunk {@code chunk} of {@code smallPage}. */
    MemoryValue(MemoryTier tier, int length, SmallPage smallPage, int chunk) {
        this(tier, length, null, smallPage, chunk);
    }

    private MemoryValue(MemoryTier tier, long length, int[] pages, SmallPage smallPage, int chunk) {
        this.tier = tier;
        this.length = Math.toIntExact(length);
        this.pages = pages;
        this.smallPage = smallPage;
        this.chunk = chunk;
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
        return part((int) (offset / MemoryTier.PAGE_SIZE));
    }

    private int partCount() {
        return pages == null ? 1 : pages.length;
    }

    /** The bytes in page {@code i} of the value (the chunk, for a small value): cut on each use, never kept. */
    private MemorySegment part(int i) {
        if (pages == null) {
            return smallPage.segment.asSlice((long) chunk * smallPage.chunkSize, length);
        }
        long start = (long) i * MemoryTier.PAGE_SIZE;
        return tier.pageSegment(pages[i]).asSlice(0, Math.min(MemoryTier.PAGE_SIZE, length - start));
    }

    private static long partStart(long offset) {
        return offset / MemoryTier.PAGE_SIZE * MemoryTier.PAGE_SIZE;
    }

    /**
     * Where the bytes are in the tier's slabs, in order: (slab, offset in the slab, length) triples, adjacent pages
     * merged. For a client mapping the slabs (KVC.SHM). Caller holds a reference.
     */
    public long[] extents() {
        if (length == 0) {
            return new long[0];
        }
        if (pages == null) {
            return new long[] {tier.slabOf(smallPage.pageId),
                    tier.offsetInSlab(smallPage.pageId) + (long) chunk * smallPage.chunkSize, length};
        }
        long[] out = new long[3 * pages.length];
        int n = 0;
        long left = length;
        for (int id : pages) {
            long len = Math.min(MemoryTier.PAGE_SIZE, left);
            left -= len;
            int slab = tier.slabOf(id);
            long offset = tier.offsetInSlab(id);
            if (n > 0 && out[n - 3] == slab && out[n - 2] + out[n - 1] == offset) {
                out[n - 1] += len;
            } else {
                out[n++] = slab;
                out[n++] = offset;
                out[n++] = len;
            }
        }
        return java.util.Arrays.copyOf(out, n);
    }

    /** Counts the whole value as written, after a client filled it in place through its shared mapping (KVC.SHM). */
    public void filledInPlace() {
        written = length;
    }

    /** Views of the bytes, in order, for gathering writes to a socket or file; callers must not write through them. Caller holds a reference. */
    public ByteBuffer[] buffers() {
        ByteBuffer[] out = new ByteBuffer[partCount()];
        for (int i = 0; i < out.length; i++) {
            out[i] = part(i).asByteBuffer();
        }
        return out;
    }

    /**
     * The native address of a small value's bytes (one contiguous chunk), or 0 for a value of whole pages: lets a
     * reply copy a small value into its output buffer with no view object per read. Valid while the caller holds a
     * reference; never written through.
     */
    public long smallAddress() {
        return smallPage != null && smallPage.segment.isNative()
                ? smallPage.segment.address() + (long) chunk * smallPage.chunkSize : 0;
    }

    /** Copies the whole value to a new heap array (small values and tests). Caller holds a reference. */
    public byte[] toArray() {
        byte[] out = new byte[length];
        long pos = 0;
        for (int i = 0; i < partCount(); i++) {
            MemorySegment part = part(i);
            MemorySegment.copy(part, java.lang.foreign.ValueLayout.JAVA_BYTE, 0, out, (int) pos, (int) part.byteSize());
            pos += part.byteSize();
        }
        return out;
    }

    /** Adds a reference unless the value was already freed; returns whether it did. */
    public boolean tryRetain() {
        for (int r = (int) REFS.getVolatile(this); r > 0; r = (int) REFS.getVolatile(this)) {
            if (REFS.compareAndSet(this, r, r + 1)) {
                return true;
            }
        }
        return false;
    }

    /** Drops a reference; the last one returns the bytes to the tier. */
    public void release() {
        int r = (int) REFS.getAndAdd(this, -1) - 1;
        if (r == 0) {
            tier.free(this);
        } else if (r < 0) {
            throw new IllegalStateException("value of " + length + " bytes released more often than retained");
        }
    }

    int refCount() {
        return (int) REFS.getVolatile(this);
    }
}
