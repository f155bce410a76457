package io.kvtier.store.disk;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import io.kvtier.store.ref.RefCount;

/**
 * One region file: records appended by the writer thread, read positionally by any thread. Reference-counted like
 * a memory value: eviction deletes the file at once, but the channel closes only when the last reader lets go, so a
 * read that started before eviction still completes with the bytes it was promised.
 */
public final class Region {
    static final String PREFIX = "region-";
    static final String SUFFIX = ".kvr";
    /** Inserted before the suffix of a region found damaged at start-up (it stays part of the log). */
    static final String DAMAGED = ".damaged";
    /** Where an evicted damaged region goes instead of being deleted, for an operator to inspect. */
    static final String QUARANTINE_DIR = "quarantine";

    private final long id;
    private final RecordFormat.Layout layout;
    private volatile Path path;
    private final FileChannel channel;
    /** Opened on the first direct read (O_DIRECT), closed with {@link #channel}; null until then or if refused. */
    private FileChannel direct;
    private boolean directRefused;
    private final RefCount refs = new RefCount(this::closeChannel); // starts with the tier's own reference
    private volatile long size;
    private volatile boolean evicted;
    /** The tier whose directory holds this region; set by that tier as it opens or creates it. */
    private DiskTier owner;

    /** A region written by this version: its records have the current layout. */
    Region(long id, Path path, FileChannel channel, long size) {
        this(id, path, channel, size, RecordFormat.Layout.V3);
    }

    Region(long id, Path path, FileChannel channel, long size, RecordFormat.Layout layout) {
        this.id = id;
        this.layout = layout;
        this.path = path;
        this.channel = channel;
        this.size = size;
    }

    static Path pathFor(Path dir, long id) {
        return dir.resolve(String.format("%s%016x%s", PREFIX, id, SUFFIX));
    }

    static long idOf(Path file) {
        String name = file.getFileName().toString();
        return Long.parseUnsignedLong(name.substring(PREFIX.length(), PREFIX.length() + 16), 16);
    }

    public long id() {
        return id;
    }

    /** The tier this region belongs to. */
    DiskTier owner() {
        return owner;
    }

    /** The index of this region's directory among the disk tier's directories (0 for a single one). */
    public int directory() {
        return owner == null ? 0 : owner.index;
    }

    Region owner(DiskTier tier) {
        this.owner = tier;
        return this;
    }

    /** The record layout of every record in this region. */
    public RecordFormat.Layout layout() {
        return layout;
    }

    public long size() {
        return size;
    }

    public boolean isEvicted() {
        return evicted;
    }

    FileChannel channel() {
        return channel;
    }

    Path path() {
        return path;
    }

    /**
     * The file opened for direct reads (O_DIRECT: no page-cache copy), opened on first use; null if it cannot be
     * (the file is gone, or the filesystem refuses), and then the caller reads through {@link #channel()}. Called
     * only by a reader holding a reference, so it never opens a channel that would outlive the region's.
     */
    synchronized FileChannel directChannel() {
        if (direct == null && !directRefused) {
            try {
                direct = FileChannel.open(path, java.nio.file.StandardOpenOption.READ,
                        com.sun.nio.file.ExtendedOpenOption.DIRECT);
            } catch (IOException | UnsupportedOperationException e) {
                directRefused = true; // evicted and deleted meanwhile, or renamed as damaged: read buffered
            }
        }
        return direct;
    }

    void grow(long bytes) {
        size += bytes;
    }

    void shrinkTo(long bytes) {
        size = bytes;
    }

    boolean isDamaged() {
        return path.getFileName().toString().endsWith(DAMAGED + SUFFIX);
    }

    /**
     * Renames the file to {@code region-<id>.damaged.kvr}: it stays in the log (its intact records are served and
     * its damage is read again at every start, so the keys it drops stay dropped), but an operator can see it, and
     * eviction moves it into {@code quarantine/} instead of deleting it.
     */
    void markDamaged() throws IOException {
        if (!isDamaged()) {
            Path damaged = path.resolveSibling(String.format("%s%016x%s%s", PREFIX, id, DAMAGED, SUFFIX));
            Files.move(path, damaged, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            path = damaged;
        }
    }

    /** Adds a reader reference unless the region was evicted and fully released; returns whether it did. */
    public boolean tryRetain() {
        return refs.tryRetain();
    }

    public void release() {
        refs.release();
    }

    private void closeChannel() {
        try {
            synchronized (this) {
                directRefused = true;
                if (direct != null) {
                    direct.close();
                }
            }
            channel.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Deletes the file (a damaged one is moved into {@code quarantine/}) and drops the tier's reference; readers
     * holding references finish first.
     */
    void evict() throws IOException {
        evicted = true;
        if (isDamaged()) {
            Path quarantine = Files.createDirectories(path.resolveSibling(QUARANTINE_DIR));
            Files.move(path, quarantine.resolve(path.getFileName()), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        } else {
            Files.deleteIfExists(path);
        }
        release();
    }

    /**
     * Forgets the region without touching its file: its directory was lost (deleted, replaced or unmounted), and the
     * path may now be another node's. Readers holding references finish first.
     */
    void forget() {
        evicted = true;
        release();
    }

    @Override
    public String toString() {
        return path.getFileName().toString();
    }
}
