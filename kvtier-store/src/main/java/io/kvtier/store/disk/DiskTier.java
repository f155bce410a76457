package io.kvtier.store.disk;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A budgeted log of region files. Appends go through a write buffer into the active region; a region is sealed when
 * full and the oldest sealed regions are evicted whole when the budget needs room. Threading: {@link #append},
 * {@link #flush} and eviction belong to one writer thread; {@link #read} is safe from any thread.
 */
public final class DiskTier implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DiskTier.class);
    private static final int WRITE_BUFFER = 4 * 1024 * 1024;
    private static final String DIRECT_SUFFIX = ".direct.tmp";

    private final Path dir;
    private final long budget;
    private final long regionSize;
    private final ArrayDeque<Region> sealed = new ArrayDeque<>();
    private final ByteBuffer writeBuffer = ByteBuffer.allocateDirect(WRITE_BUFFER);
    private final ByteBuffer header = ByteBuffer.allocateDirect(RecordFormat.HEADER_SIZE);
    private final Consumer<Region> onEvict;
    private final FileChannel lockFile;
    private Region active;
    private long nextRegionId;
    private final java.util.concurrent.atomic.AtomicLong nextDirectWrite = new java.util.concurrent.atomic.AtomicLong();
    private volatile long usedBytes;
    private volatile long evictedRegions;

    private DiskTier(Path dir, long budget, long regionSize, Consumer<Region> onEvict, FileChannel lockFile) {
        this.lockFile = lockFile;
        this.dir = dir;
        this.budget = budget;
        this.regionSize = regionSize;
        this.onEvict = onEvict;
    }

    /**
     * Opens the tier in {@code dir}, scanning every region in order and handing each intact record to
     * {@code recovered}; a torn or corrupt tail is logged, counted and truncated away.
     *
     * @param onEvict called on the writer thread for each region evicted, before its file is deleted
     */
    public static DiskTier open(Path dir, long budget, long regionSize, Consumer<Region> onEvict,
                                Consumer<RecoveredRecord> recovered, Consumer<RecoveryStats> stats) throws IOException {
        if (regionSize * 2 > budget) {
            throw new IllegalArgumentException("disk budget " + budget + " must hold at least two regions of " + regionSize);
        }
        Files.createDirectories(dir);
        DiskTier tier = new DiskTier(dir, budget, regionSize, onEvict, lock(dir));
        try {
            stats.accept(tier.recover(recovered));
        } catch (IOException | RuntimeException e) {
            tier.lockFile.close();
            throw e;
        }
        return tier;
    }

    /** Takes the data directory's exclusive lock, held until {@link #close()}: one process per directory. */
    private static FileChannel lock(Path dir) throws IOException {
        FileChannel channel = FileChannel.open(dir.resolve("LOCK"), StandardOpenOption.CREATE,
                StandardOpenOption.WRITE);
        try {
            if (channel.tryLock() == null) {
                throw new IOException("data directory " + dir.toAbsolutePath() + " is in use by another kvtier "
                        + "process (it holds " + dir.resolve("LOCK") + ")");
            }
        } catch (java.nio.channels.OverlappingFileLockException e) {
            channel.close();
            throw new IOException("data directory " + dir.toAbsolutePath() + " is already open in this process");
        } catch (IOException e) {
            channel.close();
            throw e;
        }
        return channel;
    }

    private RecoveryStats recover(Consumer<RecoveredRecord> recovered) throws IOException {
        long start = System.nanoTime();
        List<Path> files;
        try (Stream<Path> list = Files.list(dir)) {
            files = list.filter(p -> {
                String n = p.getFileName().toString();
                return n.startsWith(Region.PREFIX) && n.endsWith(Region.SUFFIX);
            }).sorted((a, b) -> Long.compareUnsigned(Region.idOf(a), Region.idOf(b))).toList();
        }
        try (Stream<Path> list = Files.list(dir)) {
            for (Path leftover : list.filter(p -> p.getFileName().toString().endsWith(DIRECT_SUFFIX)).toList()) {
                log.warn("deleting {}: a large value that was still arriving when the node stopped", leftover);
                Files.delete(leftover);
            }
        }
        RegionScanner.Totals totals = new RegionScanner.Totals();
        for (Path file : files) {
            long id = Region.idOf(file);
            FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
            Region region = new Region(id, file, channel, 0);
            new RegionScanner(region, recovered, totals).scan();
            sealed.addLast(region);
            usedBytes += region.size();
            nextRegionId = id + 1;
        }
        return new RecoveryStats(files.size(), totals.records, totals.bytes, totals.droppedRecords,
                totals.droppedBytes, (System.nanoTime() - start) / 1_000_000);
    }

    public long budget() {
        return budget;
    }

    public long usedBytes() {
        return usedBytes;
    }

    public long evictedRegions() {
        return evictedRegions;
    }

    /** The largest record this tier can ever hold: everything but one region's worth of room. */
    public long maxRecordLength() {
        return budget - regionSize;
    }

    /**
     * Appends a record and returns where it will live. The bytes may sit in the write buffer until {@link #flush()};
     * read nothing at the returned location before then. Writer thread only.
     */
    public DiskLocation append(PendingRecord record) throws IOException {
        long length = record.length();
        if (length > maxRecordLength()) {
            throw new DiskFullException(length, budget);
        }
        if (active == null || (active.size() + length > regionSize && active.size() > 0)) {
            rollOver();
        }
        makeRoom(length);
        CRC32C crc = new CRC32C();
        for (ByteBuffer part : record.value()) {
            crc.update(part.duplicate());
        }
        crc.update(record.key());
        RecordFormat.writeHeader(header, crc, record.seq(), record.expireAt(), record.key().length,
                record.valueLength(), record.type());
        long offset = active.size();
        if (length <= writeBuffer.remaining()) {
            writeBuffer.put(header.duplicate().clear());
            writeBuffer.put(record.key());
            for (ByteBuffer part : record.value()) {
                writeBuffer.put(part.duplicate());
            }
        } else {
            flush();
            ByteBuffer[] all = new ByteBuffer[record.value().length + 2];
            all[0] = header.duplicate().clear();
            all[1] = ByteBuffer.wrap(record.key());
            for (int i = 0; i < record.value().length; i++) {
                all[i + 2] = record.value()[i].duplicate();
            }
            writeFully(all, offset);
        }
        active.grow(length);
        usedBytes += length;
        return new DiskLocation(active, offset, record.key().length, record.valueLength());
    }

    /** Writes buffered records to the file (page cache). Writer thread only. */
    public void flush() throws IOException {
        if (writeBuffer.position() == 0) {
            return;
        }
        writeBuffer.flip();
        long offset = active.size() - writeBuffer.remaining();
        writeFully(new ByteBuffer[] {writeBuffer}, offset);
        writeBuffer.clear();
    }

    private void writeFully(ByteBuffer[] buffers, long offset) throws IOException {
        FileChannel channel = active.channel();
        channel.position(offset);
        long remaining = 0;
        for (ByteBuffer b : buffers) {
            remaining += b.remaining();
        }
        while (remaining > 0) {
            remaining -= channel.write(buffers);
        }
    }

    /**
     * Starts streaming a value of {@code length} bytes into a file of its own (see {@link DirectWrite}); any thread.
     *
     * @throws DiskFullException if no record that large can ever fit
     */
    public DirectWrite openDirectWrite(long length, java.util.concurrent.Executor io) throws IOException {
        if (DirectWrite.VALUE_OFFSET + length > maxRecordLength()) {
            throw new DiskFullException(DirectWrite.VALUE_OFFSET + length, budget);
        }
        Path file = dir.resolve(nextDirectWrite.incrementAndGet() + DIRECT_SUFFIX);
        return new DirectWrite(file, length, io);
    }

    /**
     * Turns a finished direct write into the newest region, holding the record of {@code key}. The active region is
     * sealed first, so region ids keep following the order in which regions were sealed. Writer thread only.
     */
    public DiskLocation adopt(DirectWrite write, byte[] key, long seq, long expireAt) throws IOException {
        long offset = write.seal(key, seq, expireAt);
        if (active != null) {
            flush();
            sealed.addLast(active);
            active = null;
        }
        makeRoom(write.fileSize());
        long id = nextRegionId++;
        Path path = Region.pathFor(dir, id);
        java.nio.file.Files.move(write.file(), path, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        write.adopted();
        Region region = new Region(id, path, write.channel(), write.fileSize());
        sealed.addLast(region);
        usedBytes += write.fileSize();
        return new DiskLocation(region, offset, key.length, Math.toIntExact(write.length()));
    }

    /** Deletes a region adopted from a direct write whose value lost a race to a newer version. Writer thread only. */
    public void discard(Region region) throws IOException {
        if (sealed.remove(region)) {
            usedBytes -= region.size();
            region.evict();
        }
    }

    private void rollOver() throws IOException {
        if (active != null) {
            flush();
            sealed.addLast(active);
        }
        Path path = Region.pathFor(dir, nextRegionId);
        FileChannel channel = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        active = new Region(nextRegionId++, path, channel, 0);
    }

    private void makeRoom(long length) throws IOException {
        while (usedBytes + length > budget && !sealed.isEmpty()) {
            Region victim = sealed.pollFirst();
            onEvict.accept(victim);
            usedBytes -= victim.size();
            evictedRegions++;
            victim.evict();
            log.debug("evicted region {} ({} bytes)", victim, victim.size());
        }
        if (usedBytes + length > budget) {
            throw new DiskFullException(length, budget);
        }
    }

    /** Deletes every region, the active one included (FLUSHALL). Writer thread only. */
    public void deleteAll() throws IOException {
        writeBuffer.clear();
        if (active != null) {
            sealed.addLast(active);
            active = null;
        }
        for (Region r : sealed) {
            usedBytes -= r.size();
            r.evict();
        }
        sealed.clear();
    }

    /**
     * Reads the record at {@code location} into {@code dst} (which needs {@link DiskLocation#recordLength()} bytes
     * remaining), verifies it, and returns a slice holding just the value. The caller holds a region reference.
     *
     * @throws CorruptRecordException if the header or checksum does not match
     */
    public ByteBuffer read(DiskLocation location, byte[] expectedKey, ByteBuffer dst) throws IOException {
        int length = Math.toIntExact(location.recordLength());
        ByteBuffer buf = dst.slice(dst.position(), length);
        if (!RecordFormat.readFully(location.region().channel(), buf, location.offset())) {
            throw new CorruptRecordException("record at " + location.region() + ":" + location.offset()
                    + " is cut short at " + buf.position() + " of " + length + " bytes");
        }
        buf.flip();
        RecordFormat.Header h = RecordFormat.Header.parse(buf, 0);
        if (!h.plausible(length) || h.keyLength() != location.keyLength() || h.valueLength() != location.valueLength()
                || !RecordFormat.verify(buf, 0, h)
                || !buf.slice(RecordFormat.HEADER_SIZE, h.keyLength()).equals(ByteBuffer.wrap(expectedKey))) {
            throw new CorruptRecordException("record at " + location.region() + ":" + location.offset()
                    + " failed its checksum or header check");
        }
        return buf.slice(RecordFormat.HEADER_SIZE + h.keyLength(), h.valueLength());
    }

    /**
     * Verifies the record at {@code location} in pieces through {@code scratch}, for values too large to read
     * whole. The caller holds a region reference.
     *
     * @throws CorruptRecordException if the header, key or checksum does not match
     */
    public void verify(DiskLocation location, byte[] expectedKey, ByteBuffer scratch) throws IOException {
        ByteBuffer headerBuf = ByteBuffer.allocate(RecordFormat.HEADER_SIZE);
        FileChannel channel = location.region().channel();
        boolean whole = RecordFormat.readFully(channel, headerBuf, location.offset());
        RecordFormat.Header h = RecordFormat.Header.parse(headerBuf.flip(), 0);
        byte[] key = whole && h.plausible(location.recordLength())
                && h.valueLength() == location.valueLength()
                ? RecordFormat.verifyStreaming(channel, location.offset(), h, scratch) : null;
        if (key == null || !java.util.Arrays.equals(key, expectedKey)) {
            throw new CorruptRecordException("record at " + location.region() + ":" + location.offset()
                    + " failed its checksum or header check");
        }
    }

    /** Reads value bytes from {@code valueOffset} into {@code dst} (positional; no verification). */
    public void readValue(DiskLocation location, long valueOffset, ByteBuffer dst) throws IOException {
        long pos = location.offset() + RecordFormat.HEADER_SIZE + location.keyLength() + valueOffset;
        if (!RecordFormat.readFully(location.region().channel(), dst, pos)) {
            throw new CorruptRecordException("record at " + location.region() + ":" + location.offset()
                    + " is cut short");
        }
    }

    /** Flushes and forces everything to stable storage, then closes the files. Writer thread (or after it stopped). */
    @Override
    public void close() throws IOException {
        if (active != null) {
            flush();
            active.channel().force(true);
            active.release();
        }
        for (Region r : sealed) {
            r.channel().force(true);
            r.release();
        }
        sealed.clear();
        lockFile.close(); // releases the directory lock
    }

    /** Forces written data to stable storage. Writer thread only. */
    public void force() throws IOException {
        flush();
        if (active != null) {
            active.channel().force(false);
        }
    }

    List<Region> regions() {
        List<Region> all = new ArrayList<>(sealed);
        if (active != null) {
            all.add(active);
        }
        return all;
    }
}
