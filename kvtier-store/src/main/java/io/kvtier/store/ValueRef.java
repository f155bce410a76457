package io.kvtier.store;

import io.kvtier.store.disk.DiskLocation;
import io.kvtier.store.disk.DiskTier;
import io.kvtier.store.memory.MemoryValue;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A reader's hold on one value's bytes, in memory or on disk, taken atomically with the lookup: while it is open
 * the bytes can be neither freed nor reused, even if the key is deleted or overwritten meanwhile. Close exactly once
 * (further closes are no-ops).
 */
public final class ValueRef implements AutoCloseable {
    private static final VarHandle CLOSED;

    static {
        try {
            CLOSED = MethodHandles.lookup().findVarHandle(ValueRef.class, "closed", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final Entry entry;
    private final MemoryValue memory;
    final DiskLocation disk;
    /** Whether reading it counts as an access: false for a no-touch read, whose disk read promotes nothing. */
    final boolean touch;
    /** Set by the first close (a field, not an AtomicBoolean: one object and one pointer less per read). */
    private volatile boolean closed;

    private ValueRef(Entry entry, MemoryValue memory, DiskLocation disk, boolean touch) {
        this.entry = entry;
        this.memory = memory;
        this.disk = disk;
        this.touch = touch;
    }

    /** Retains the entry's bytes, preferring memory; null if the entry no longer has any. */
    static ValueRef retain(Entry e) {
        return retain(e, true);
    }

    /** As {@link #retain(Entry)}; with {@code touch} false, its disk read will not count toward promotion. */
    static ValueRef retain(Entry e, boolean touch) {
        synchronized (e) {
            if (!e.state().isLive()) {
                return null;
            }
            if (e.memory != null && e.memory.tryRetain()) {
                return new ValueRef(e, e.memory, null, touch);
            }
            if (e.disk != null && e.disk.region().tryRetain()) {
                return new ValueRef(e, null, e.disk, touch);
            }
            return null;
        }
    }

    public long length() {
        return entry.length;
    }

    public boolean inMemory() {
        return memory != null;
    }

    /** The memory copy; only when {@link #inMemory()}. */
    public MemoryValue memory() {
        if (memory == null) {
            throw new IllegalStateException("value is on disk; read it with TieredStore.readFromDisk");
        }
        return memory;
    }

    /**
     * Bytes a buffer needs to receive this value's disk record through {@link TieredStore#readFromDisk}: the record
     * and room to align a direct read (DiskTier#read); only when not {@link #inMemory()}.
     */
    public int diskReadLength() {
        return DiskTier.readLength(disk);
    }

    /** The cluster version of the value this reference holds (0 outside a cluster); see {@link TieredStore#setVersion}. */
    public long version() {
        return entry.version;
    }

    /** The expiry time of the version this reference holds, epoch millis, 0 = none. */
    public long expireAt() {
        return entry.expireAt;
    }

    @Override
    public void close() {
        if (CLOSED.compareAndSet(this, false, true)) {
            if (memory != null) {
                memory.release();
            } else {
                disk.region().release();
            }
        }
    }
}
