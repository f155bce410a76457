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
 * <p>One exists per key in memory, so it is kept small (32 bytes of heap, issues 10 and 34): the count is an int
 * field updated through a {@link VarHandle} rather than a {@code RefCount} with its own atomic and release action, a
 * value keeps no segments of its own (its slices of the pages are cut when the bytes are read or written), and one
 * field says where its bytes are: the {@link SmallPage} of a small value's chunk (which knows its tier), or the
 * {@link Pages} of a large one.
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

    /** The whole pages of a large (or empty) value, and their tier. */
    private record Pages(MemoryTier tier, int[] ids) {
    }

    private final Object home;         // the SmallPage holding a small value's chunk, or a large value's Pages
    private final int length;          // values in memory are below 2 GiB (StoreOptions.MAX_VALUE)
    final int chunk;                   // the chunk in its SmallPage (small values)
    @SuppressWarnings("unused")        // through REFS
    private volatile int refs = 1;
    private int written;

    /** A large (or empty) value made of whole pages. */
    MemoryValue(MemoryTier tier, long length, int[] pages) {
        this.length = Math.toIntExact(length);
        this.home = new Pages(tier, pages);
        this.chunk = 0;
    }

    /** A small value in chunk {@code chunk} of {@code smallPage} (which knows its tier). */
    MemoryValue(int length, SmallPage smallPage, int chunk) {
        this.length = length;
        this.home = smallPage;
        this.chunk = chunk;
    }

    /** The size-class page holding this value's chunk (small values), else null. */
    SmallPage smallPage() {
        return home instanceof SmallPage p ? p : null;
    }

    /** The whole pages this value owns (large or empty values), else null. */
    int[] pages() {
        return home instanceof Pages p ? p.ids() : null;
    }

    private MemoryTier tier() {
        return home instanceof SmallPage p ? p.tier : ((Pages) home).tier();
    }

    public long length() {
        return length;
    }

    /** Bytes of the budget this value occupies (whole pages, or its chunk size). */
    public long footprint() {
        return home instanceof SmallPage p ? p.chunkSize : (long) ((Pages) home).ids().length * MemoryTier.PAGE_SIZE;
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
        return home instanceof Pages p ? p.ids().length : 1;
    }

    /** The bytes in page {@code i} of the value (the chunk, for a small value): cut on each use, never kept. */
    private MemorySegment part(int i) {
        if (home instanceof SmallPage p) {
            return p.segment.asSlice((long) chunk * p.chunkSize, length);
        }
        Pages pages = (Pages) home;
        long start = (long) i * MemoryTier.PAGE_SIZE;
        return pages.tier().pageSegment(pages.ids()[i]).asSlice(0, Math.min(MemoryTier.PAGE_SIZE, length - start));
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
        if (home instanceof SmallPage p) {
            return new long[] {p.tier.slabOf(p.pageId), p.tier.offsetInSlab(p.pageId) + (long) chunk * p.chunkSize,
                    length};
        }
        MemoryTier tier = ((Pages) home).tier();
        int[] pages = ((Pages) home).ids();
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
        return home instanceof SmallPage p && p.segment.isNative() ? p.segment.address() + (long) chunk * p.chunkSize
                : 0;
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
            tier().free(this);
        } else if (r < 0) {
            throw new IllegalStateException("value of " + length + " bytes released more often than retained");
        }
    }

    int refCount() {
        return (int) REFS.getVolatile(this);
    }
}
