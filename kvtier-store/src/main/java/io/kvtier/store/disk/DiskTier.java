package io.kvtier.store.disk;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
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
 *
 * <p>Direct I/O. Where the filesystem takes O_DIRECT (probed at open), a record of 64 KiB or more is read as the
 * aligned blocks that hold it, straight into the caller's buffer, and a flush writes the whole blocks it covers
 * with O_DIRECT, the partial blocks at either end through the page cache (see {@link #flush}): cold data then costs
 * no page-cache copy and no second place in RAM, and the device, not the writeback of dirty pages, sets the pace.
 *
 * <p>Faults. A failed write abandons the active region at its last fully written byte (the partial record is
 * truncated away, the region sealed), so that the log on disk never ends in a record nobody was told is written.
 * On "no space left on device" the writer evicts the oldest region and retries, as a full budget would (see {@link #evictOldestForSpace}). Other write errors (read-only filesystem, I/O
 * error) are just thrown: the caller keeps the data in memory. Before creating any file the tier checks that the directory's LOCK is still the file it
 * locked (see DataDirLock); once it is not, every write fails with {@link DataDirLostException}.
 */
public final class DiskTier implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DiskTier.class);
    private static final int WRITE_BUFFER = 4 * 1024 * 1024;
    static final String DIRECT_SUFFIX = ".direct.tmp";
    /** Alignment of direct reads' file positions, lengths and buffer addresses: every device's logical block. */
    public static final int ALIGN = 4096;
    /** What a read's buffer needs beyond the record: room to align its address, start and end (see {@link #read}). */
    public static final int READ_SLACK = 3 * ALIGN;
    /** Records from this size on are read with O_DIRECT; smaller ones through the page cache, which may hold them. */
    static final int DIRECT_READ_MIN = 64 << 10;
    /** A flush writes its whole blocks with O_DIRECT when they come to this much; less goes through the page cache. */
    static final int DIRECT_WRITE_MIN = 64 << 10;

    private final Path dir;
    private final long budget;
    private final long regionSize;
    private final ArrayDeque<Region> sealed = new ArrayDeque<>();
    /** Aligned (its address and capacity), so that its whole blocks can be written with O_DIRECT. */
    private final ByteBuffer writeBuffer = ByteBuffer.allocateDirect(WRITE_BUFFER + ALIGN).alignedSlice(ALIGN);
    /** The active region's offset of the write buffer's first byte: a block boundary when writing directly. */
    private long bufferBase;
    /** The write buffer's first byte not yet in the file (before it: bytes of the block already written). */
    private int bufferFrom;
    /** The active region opened for O_DIRECT writes ({@link #directWriter}), and the region it is of. */
    private FileChannel activeDirect;
    private Region activeDirectOf;
    private final ByteBuffer header = ByteBuffer.allocateDirect(RecordFormat.HEADER_SIZE);
    private final ByteBuffer trailer = ByteBuffer.allocateDirect(RecordFormat.TRAILER_SIZE);
    private final Consumer<Region> onEvict;
    private final DataDirLock lock;
    private Region active;
    private long activeWritten;          // bytes of the active region known to be in its file
    private long nextRegionId;
    private long maxSeq;                 // highest sequence number in the log: each header's "written" field
    /** The region of the log being written (or last written), whose summary the next one begins with. */
    private RegionSummary summary = new RegionSummary();
    private long sealBytesWritten;
    private long keepFrom = Long.MAX_VALUE; // regions with this id or higher are never evicted (shutdown flush)
    private volatile boolean directoryLost;
    /** Closed or abandoned: the lock is released, and nothing may be written here any more (not a loss to report). */
    private volatile boolean released;
    /** Whether large records are read, and large flushes written, with O_DIRECT: the filesystem takes it (tmpfs does
     *  not), see probeDirect. */
    private final boolean directIo;
    private final java.util.concurrent.atomic.LongAdder directReadCount = new java.util.concurrent.atomic.LongAdder();
    private volatile long directWriteBytes;
    private final java.util.concurrent.atomic.AtomicLong nextDirectWrite = new java.util.concurrent.atomic.AtomicLong();
    private volatile long usedBytes;
    /** This tier's place in its DiskSet (0 for a single directory); set once it opened. */
    int index;
    private volatile long evictedRegions;

    private DiskTier(Path dir, long budget, long regionSize, Consumer<Region> onEvict, DataDirLock lock) {
        this.lock = lock;
        this.dir = dir;
        this.budget = budget;
        this.regionSize = regionSize;
        this.onEvict = onEvict;
        this.directIo = probeDirect(dir);
    }

    /**
     * Whether files in {@code dir} can be written and read with O_DIRECT at {@link #ALIGN}: a small file is written
     * and read back that way. {@code -Dkvtier.disk.direct=false} turns direct I/O off.
     */
    private static boolean probeDirect(Path dir) {
        if (!Boolean.parseBoolean(System.getProperty("kvtier.disk.direct", "true"))) {
            log.info("disk tier in {}: direct I/O turned off (kvtier.disk.direct=false): reads and writes go through "
                    + "the page cache", dir.toAbsolutePath());
            return false;
        }
        Path probe = dir.resolve(".direct-probe");
        try {
            long block = Files.getFileStore(dir).getBlockSize();
            if (block > ALIGN || ALIGN % block != 0) {
                log.info("disk tier in {}: blocks of {} bytes, not a divisor of {}: reads and writes go through the "
                        + "page cache", dir.toAbsolutePath(), block, ALIGN);
                return false;
            }
            try (FileChannel ch = FileChannel.open(probe, StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE, com.sun.nio.file.ExtendedOpenOption.DIRECT)) {
                ByteBuffer buf = ByteBuffer.allocateDirect(2 * ALIGN).alignedSlice(ALIGN).limit(ALIGN);
                buf.putLong(0, 0x6b76746965722121L);
                if (ch.write(buf, 0) != ALIGN) {
                    return false;
                }
                buf.clear().limit(ALIGN).putLong(0, 0);
                return ch.read(buf, 0) == ALIGN && buf.getLong(0) == 0x6b76746965722121L;
            }
        } catch (IOException | UnsupportedOperationException e) {
            log.info("disk tier in {}: the filesystem refuses O_DIRECT ({}): reads and writes go through the page "
                    + "cache", dir.toAbsolutePath(), e.toString());
            return false;
        } finally {
            try {
                Files.deleteIfExists(probe);
            } catch (IOException e) {
                log.debug("could not delete {}: {}", probe, e.toString());
            }
        }
    }

    /** Whether large records are read, and large flushes written, with O_DIRECT (see {@link #read}, {@link #flush}). */
    public boolean directIo() {
        return directIo;
    }

    /** Bytes this process wrote with O_DIRECT. */
    public long directWriteBytes() {
        return directWriteBytes;
    }

    /** Records this process read with O_DIRECT. */
    public long directReadCount() {
        return directReadCount.sum();
    }

    /**
     * Opens the tier in {@code dir}, scanning every region in order and handing each intact record, and each damaged
     * one it can name, to {@code recovered} (see RegionScanner).
     *
     * @param onEvict called on the writer thread for each region evicted, before its file is deleted
     * @throws IOException if another process holds the directory, or it holds regions of another format version
     */
    public static DiskTier open(Path dir, long budget, long regionSize, Consumer<Region> onEvict,
                                Consumer<RecoveredRecord> recovered, Consumer<RecoveryStats> stats) throws IOException {
        if (regionSize * 2 > budget) {
            throw new IllegalArgumentException("disk budget " + budget + " must hold at least two regions of " + regionSize);
        }
        Files.createDirectories(dir);
        return open(dir, budget, regionSize, onEvict, recovered, stats, DataDirLock.acquire(dir));
    }

    /** As above, in a directory whose lock the caller acquired (and hands over: closed on failure). */
    static DiskTier open(Path dir, long budget, long regionSize, Consumer<Region> onEvict,
                         Consumer<RecoveredRecord> recovered, Consumer<RecoveryStats> stats, DataDirLock lock)
            throws IOException {
        if (regionSize * 2 > budget) {
            lock.close();
            throw new IllegalArgumentException("disk budget " + budget + " must hold at least two regions of " + regionSize);
        }
        DiskTier tier = new DiskTier(dir, budget, regionSize, onEvict, lock);
        try {
            stats.accept(tier.recover(recovered));
        } catch (IOException | RuntimeException e) {
            tier.regions().forEach(Region::release);
            tier.lock.close();
            throw e;
        }
        return tier;
    }

    private RecoveryStats recover(Consumer<RecoveredRecord> recovered) throws IOException {
        long start = System.nanoTime();
        List<Path> files = RegionFiles.list(dir);
        List<RecordFormat.Layout> layouts = new ArrayList<>();
        for (Path file : files) {
            layouts.add(RegionFiles.layoutOf(file));
        }
        try (Stream<Path> list = Files.list(dir)) {
            for (Path leftover : list.filter(p -> p.getFileName().toString().endsWith(DIRECT_SUFFIX)).toList()) {
                log.warn("deleting {}: a large value that was still arriving when the node stopped", leftover);
                Files.delete(leftover);
            }
        }
        RegionScanner.Totals totals = new RegionScanner.Totals();
        Recovery tap = new Recovery(recovered);
        for (int i = 0; i < files.size(); i++) {
            Path file = files.get(i);
            long id = Region.idOf(file);
            FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
            Region region = new Region(id, file, channel, 0, layouts.get(i)).owner(this);
            sealed.addLast(region);
            tap.begin(region);
            new RegionScanner(region, tap, totals, i == files.size() - 1).scan();
            tap.end(region);
            usedBytes += region.size();
            nextRegionId = id + 1;
        }
        totals.finish(tap);
        totals.damagedRegions += tap.applySeals();
        maxSeq = totals.maxSeq;
        return new RecoveryStats(files.size(), totals.records, totals.bytes, totals.droppedRecords,
                totals.droppedBytes, (System.nanoTime() - start) / 1_000_000, totals.damagedRegions,
                totals.maxSeq);
    }

    /**
     * Between the region scans and the index: takes the seal records out of the stream, keeps the records of the
     * newest region of the log (the next region's seal summarizes it), holds back damage of unknown keys until the
     * seals say whether the region's own summary covers it, and then applies the summaries of regions found missing,
     * cut short or damaged (RegionSummary).
     */
    private final class Recovery implements Consumer<RecoveredRecord> {
        private final Consumer<RecoveredRecord> index;
        private final java.util.Map<Long, Region> byId = new java.util.HashMap<>();
        private final List<DiskLocation> seals = new ArrayList<>();
        private final List<long[]> unknown = new ArrayList<>(); // region id, bound
        private RegionSummary scanning = new RegionSummary();
        private Region current;
        private boolean currentSealed;
        private boolean anySeal;

        Recovery(Consumer<RecoveredRecord> index) {
            this.index = index;
        }

        void begin(Region region) {
            current = region;
            currentSealed = false;
            scanning.restart(region.id());
        }

        void end(Region region) {
            byId.put(region.id(), region);
            // The newest region of the log (one beginning with a seal; before any, as written by an older version,
            // any region) is what the first region written from now on summarizes.
            if (currentSealed || !anySeal) {
                RegionSummary done = scanning;
                scanning = summary; // reused for the next region's scan
                summary = done;
            }
        }

        @Override
        public void accept(RecoveredRecord r) {
            if (r.type() == RecordFormat.TYPE_SEAL) {
                if (r.location().offset() == 0) { // a region of the log begins with one; elsewhere it means nothing
                    currentSealed = true;
                    anySeal = true;
                    seals.add(r.location());
                }
                return;
            }
            if (r.type() == RecoveredRecord.DAMAGED_UNKNOWN) {
                unknown.add(new long[] {current == null ? -1 : current.id(), r.seq()});
                return;
            }
            if (r.key() != null && r.location() != null) {
                scanning.record(RecordFormat.fingerprint(r.key()), r.seq(), r.location().offset());
            }
            index.accept(r);
        }

        /** Applies the summaries that must be; returns how many regions were found missing or cut short. */
        int applySeals() throws IOException {
            java.util.Set<Long> covered = new java.util.HashSet<>();
            long oldest = byId.keySet().stream().mapToLong(Long::longValue).min().orElse(Long.MAX_VALUE);
            int lost = 0;
            for (DiskLocation seal : seals) {
                Region holder = seal.region();
                long valueAt = holder.layout().headerSize();
                ByteBuffer head = ByteBuffer.allocate(RegionSummary.HEAD);
                readFully(holder, valueAt, head);
                RegionSummary.Head h = RegionSummary.Head.parse(head);
                ByteBuffer directs = ByteBuffer.allocate(24 * h.directCount()).order(ByteOrder.LITTLE_ENDIAN);
                readFully(holder, valueAt + RegionSummary.HEAD, directs);
                for (int i = 0; i < h.directCount(); i++) {
                    long fp = directs.getLong(24 * i);
                    long seq = directs.getLong(24 * i + 8);
                    if (!byId.containsKey(directs.getLong(24 * i + 16))) {
                        index.accept(RecoveredRecord.damaged(fp, seq)); // gone: nothing older of its key may serve
                    }
                }
                if (h.regionId() < 0) {
                    continue;
                }
                Region p = byId.get(h.regionId());
                boolean missing = p == null;
                boolean cut = p != null && p.size() < h.length();
                // Damage the scan named record by record needs nothing more; a stretch it could not name does.
                if (!missing && !cut && unknown.stream().noneMatch(u -> u[0] == p.id())) {
                    continue;
                }
                long records = h.recordCount();
                ByteBuffer chunk = ByteBuffer.allocate(16 * 65_536).order(ByteOrder.LITTLE_ENDIAN);
                long at = valueAt + h.recordsOffset();
                for (long done = 0; done < records; ) {
                    int n = (int) Math.min(65_536, records - done);
                    chunk.clear().limit(16 * n);
                    readFully(holder, at + 16 * done, chunk);
                    for (int i = 0; i < n; i++) {
                        index.accept(RecoveredRecord.damaged(chunk.getLong(16 * i), chunk.getLong(16 * i + 8)));
                    }
                    done += n;
                }
                covered.add(h.regionId());
                if (missing && h.regionId() < oldest) {
                    log.debug("region {} (before the oldest) is gone, as eviction leaves it: its {} records' keys "
                            + "are not served from anything older", h.regionId(), records);
                } else if (missing) {
                    lost++;
                    log.error("region {} is missing (region {} summarizes it): its {} records are lost; keys whose "
                            + "newest surviving record is older than one of them are not served", h.regionId(),
                            holder.id(), records);
                } else if (cut) {
                    lost++;
                    log.error("region {} is {} bytes long but was {} when region {} summarized it: the records cut "
                            + "off are lost; keys whose newest surviving record is older than one of them are not "
                            + "served", h.regionId(), p.size(), h.length(), holder.id());
                    p.markDamaged();
                } else {
                    log.warn("region {} has damage naming no key: its summary (in region {}) names the records, so "
                            + "only their keys are dropped", h.regionId(), holder.id());
                }
            }
            for (long[] u : unknown) {
                if (!covered.contains(u[0])) {
                    index.accept(RecoveredRecord.damagedUnknown(u[1]));
                }
            }
            return lost;
        }
    }

    private static void readFully(Region region, long position, ByteBuffer dst) throws IOException {
        while (dst.hasRemaining()) {
            int n = region.channel().read(dst, position);
            if (n < 0) {
                throw new java.io.EOFException("region " + region + " ends before " + position);
            }
            position += n;
        }
        dst.flip();
    }

    /** Bytes of seal records (region summaries) this process wrote: the log's bookkeeping (RegionSummary). */
    public long sealBytesWritten() {
        return sealBytesWritten;
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

    /** Whether the data directory was deleted or replaced under this node (every write then fails). */
    public boolean directoryLost() {
        return directoryLost;
    }

    /**
     * Checks that the data directory's LOCK is still the file this tier locked; once it is not, logs an ERROR (once)
     * and fails every later write. Called before any file is created, and periodically by the writer. Once the tier
     * is closed or abandoned (its lock released) it fails too, silently: nothing may be written there any more.
     *
     * @throws DataDirLostException if the directory was deleted or replaced, or the tier closed
     */
    public void checkDirectory() throws DataDirLostException {
        if (released) {
            throw new DataDirLostException(dir);
        }
        if (!directoryLost && !lock.stillHeld()) {
            directoryLost = true;
            log.error("data directory {} was deleted or replaced while this node ran ({} is no longer the file it "
                    + "locked): writing nothing there from now on; values only in memory stay there until this node "
                    + "stops", dir.toAbsolutePath(), lock.file());
        }
        if (directoryLost) {
            throw new DataDirLostException(dir);
        }
    }

    /**
     * From now on, evict no region that is not yet sealed: what the shutdown flush writes is never evicted to make room
     * for more of it (that would lose what it just wrote). Writer thread only.
     */
    public void keepNewRegions() throws IOException {
        if (active != null) { // what it holds was written before: evictable like any older region
            flush();
            sealed.addLast(active);
            active = null;
        }
        keepFrom = nextRegionId;
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
        if (directoryLost) {
            throw new DataDirLostException(dir);
        }
        if (active == null || (active.size() + length > regionSize && active.size() > 0)) {
            rollOver();
        }
        DiskLocation location = write(record, length);
        summary.record(RecordFormat.fingerprint(record.key()), record.seq(), location.offset());
        return location;
    }

    /** Appends {@code record} to the active region (which must have room for it). */
    private DiskLocation write(PendingRecord record, long length) throws IOException {
        makeRoom(length);
        encode(record);
        long offset = active.size();
        if (directIo) { // whatever its length, through the aligned buffer: its full stretches are written directly
            put(header.duplicate().clear());
            put(ByteBuffer.wrap(record.key()));
            for (ByteBuffer part : record.value()) {
                put(part.duplicate());
            }
            put(trailer.duplicate().clear());
        } else if (length <= writeBuffer.remaining()) {
            writeBuffer.put(header.duplicate().clear());
            writeBuffer.put(record.key());
            for (ByteBuffer part : record.value()) {
                writeBuffer.put(part.duplicate());
            }
            writeBuffer.put(trailer.duplicate().clear());
        } else {
            flush();
            ByteBuffer[] all = new ByteBuffer[record.value().length + 3];
            all[0] = header.duplicate().clear();
            all[1] = ByteBuffer.wrap(record.key());
            for (int i = 0; i < record.value().length; i++) {
                all[i + 2] = record.value()[i].duplicate();
            }
            all[all.length - 1] = trailer.duplicate().clear();
            writeFully(all, offset);
            activeWritten = offset + length;
        }
        active.grow(length);
        usedBytes += length;
        return new DiskLocation(active, offset, record.key().length, record.valueLength());
    }

    private void encode(PendingRecord record) {
        CRC32C crc = new CRC32C();
        for (ByteBuffer part : record.value()) {
            crc.update(part.duplicate());
        }
        maxSeq = Math.max(maxSeq, record.seq());
        RecordFormat.writeHeader(header, (int) crc.getValue(), record.seq(), maxSeq, record.expireAt(), record.key(),
                record.valueLength(), record.type(), record.version());
        RecordFormat.writeTrailer(trailer, record.seq(), record.key(), record.key().length, record.valueLength(),
                record.type());
    }

    /**
     * Copies {@code src} into the write buffer; each time the buffer fills, writes it out ({@link #writeOut}) and
     * starts it again at the next block. For direct I/O only (the buffer's base is then always a block boundary).
     */
    private void put(ByteBuffer src) throws IOException {
        while (src.hasRemaining()) {
            if (!writeBuffer.hasRemaining()) {
                checkDirectoryOrAbandon();
                writeOut(writeBuffer.capacity());
                bufferBase += writeBuffer.capacity();
                bufferFrom = 0;
                writeBuffer.clear();
            }
            int n = Math.min(src.remaining(), writeBuffer.remaining());
            writeBuffer.put(writeBuffer.position(), src, src.position(), n);
            writeBuffer.position(writeBuffer.position() + n);
            src.position(src.position() + n);
        }
    }

    /**
     * Writes buffered records to the file. With direct I/O, the whole blocks among them go to the device with
     * O_DIRECT when they come to {@link #DIRECT_WRITE_MIN} or more (no copy into the page cache, nothing there to
     * write back or to hold twice), and a partial block at either end through the page cache: a block is written
     * one way only and never rewritten, so that no page the cache holds can be older than the file (Linux keeps
     * O_DIRECT and cached I/O coherent for distinct blocks, not for a block written both ways at once). The file
     * ends exactly at the last record either way. Writer thread only.
     */
    public void flush() throws IOException {
        if (writeBuffer.position() == bufferFrom) {
            return;
        }
        checkDirectoryOrAbandon(); // a stat per batch: what it writes must land in this node's own directory
        if (directIo) {
            writeOut(writeBuffer.position());
            long end = bufferBase + writeBuffer.position();
            bufferBase = end & -ALIGN; // the next flush starts in the block this one ended in, through the cache
            bufferFrom = (int) (end - bufferBase);
            writeBuffer.clear().position(bufferFrom);
        } else {
            writeBuffer.flip();
            long offset = active.size() - writeBuffer.remaining();
            writeFully(new ByteBuffer[] {writeBuffer}, offset);
            writeBuffer.clear();
        }
        activeWritten = active.size();
    }

    private void checkDirectoryOrAbandon() throws DataDirLostException {
        try {
            checkDirectory();
        } catch (DataDirLostException e) {
            abandonActive();
            throw e;
        }
    }

    /**
     * Writes the write buffer's bytes {@code [bufferFrom, upTo)} at their place in the active region: the blocks
     * they cover whole with O_DIRECT if they are enough, the partial blocks at either end (or all of it) through
     * the page cache. On failure the active region is abandoned.
     */
    private void writeOut(int upTo) throws IOException {
        long start = bufferBase + bufferFrom;
        long end = bufferBase + upTo;
        long a = (start + ALIGN - 1) & -ALIGN;
        long b = end & -ALIGN;
        try {
            if (b - a >= DIRECT_WRITE_MIN) {
                writeAt(active.channel(), bufferFrom, (int) (a - bufferBase), start);
                writeAt(directWriter(), (int) (a - bufferBase), (int) (b - bufferBase), a);
                directWriteBytes += b - a;
                writeAt(active.channel(), (int) (b - bufferBase), upTo, b);
            } else {
                writeAt(active.channel(), bufferFrom, upTo, start);
            }
        } catch (IOException e) {
            abandonActive();
            throw e;
        }
    }

    private void writeAt(FileChannel channel, int from, int to, long position) throws IOException {
        ByteBuffer src = writeBuffer.slice(from, to - from);
        while (src.hasRemaining()) {
            position += channel.write(src, position);
        }
    }

    /** The active region's file opened for O_DIRECT writes; the previous region's is closed when the active changes. */
    private FileChannel directWriter() throws IOException {
        if (activeDirectOf != active) {
            closeDirectWriter();
            activeDirect = FileChannel.open(active.path(), StandardOpenOption.WRITE,
                    com.sun.nio.file.ExtendedOpenOption.DIRECT);
            activeDirectOf = active;
        }
        return activeDirect;
    }

    private void closeDirectWriter() {
        if (activeDirect != null) {
            try {
                activeDirect.close();
            } catch (IOException e) {
                log.warn("could not close the direct writer of region {}: {}", activeDirectOf, e.toString());
            }
            activeDirect = null;
            activeDirectOf = null;
        }
    }

    private void writeFully(ByteBuffer[] buffers, long offset) throws IOException {
        FileChannel channel = active.channel();
        try {
            channel.position(offset);
            long remaining = 0;
            for (ByteBuffer b : buffers) {
                remaining += b.remaining();
            }
            while (remaining > 0) {
                remaining -= channel.write(buffers);
            }
        } catch (IOException e) {
            abandonActive();
            throw e;
        }
    }

    /**
     * After a failed write: cuts the active region back to its last fully written record and seals it, so that the
     * failed records (whose writers are told they failed) leave nothing behind.
     */
    private void abandonActive() {
        Region region = active;
        active = null;
        writeBuffer.clear();
        bufferFrom = 0;
        closeDirectWriter();
        long cut = region.size() - activeWritten;
        try {
            region.channel().truncate(activeWritten);
        } catch (IOException e) {
            log.warn("could not cut region {} back to {} bytes after a failed write: {}", region, activeWritten,
                    e.toString());
        }
        region.shrinkTo(activeWritten);
        if (summary.regionId() == region.id()) {
            summary.cutBack(activeWritten);
        }
        usedBytes -= cut;
        sealed.addLast(region);
    }

    /**
     * After "no space left on device": evicts the oldest region that may be evicted, so that a retry can fit; false
     * if there is none (every region is newer than {@link #keepNewRegions} allows, or there are none). Writer thread.
     */
    public boolean evictOldestForSpace() throws IOException {
        while (!sealed.isEmpty() && sealed.peekFirst().id() < keepFrom) {
            Region victim = sealed.pollFirst();
            onEvict.accept(victim);
            usedBytes -= victim.size();
            evictedRegions++;
            victim.evict();
            if (victim.size() > 0) { // an empty one (left by a failed write) frees nothing: go on
                log.warn("the filesystem of {} is full: evicted region {} ({} bytes) to make room",
                        dir.toAbsolutePath(), victim, victim.size());
                return true;
            }
        }
        return false;
    }

    /** Whether {@code e} is ENOSPC (the JDK reports errno only as its message). */
    public static boolean isNoSpace(IOException e) {
        return e.getMessage() != null && e.getMessage().contains("No space left on device");
    }

    /**
     * Starts streaming a value of {@code length} bytes into a file of its own (see {@link DirectWrite}); any thread.
     *
     * @throws DiskFullException if no record that large can ever fit
     */
    public DirectWrite openDirectWrite(long length, java.util.concurrent.Executor io) throws IOException {
        if (DirectWrite.VALUE_OFFSET + length + RecordFormat.TRAILER_SIZE > maxRecordLength()) {
            throw new DiskFullException(DirectWrite.VALUE_OFFSET + length + RecordFormat.TRAILER_SIZE, budget);
        }
        checkDirectory();
        Path file = dir.resolve(nextDirectWrite.incrementAndGet() + DIRECT_SUFFIX);
        return new DirectWrite(file, length, io);
    }

    /**
     * Turns a finished direct write into the newest region, holding the record of {@code key}. The active region is
     * sealed first, so region ids keep following the order in which regions were sealed. Writer thread only.
     */
    public DiskLocation adopt(DirectWrite write, byte[] key, long seq, long expireAt, long version)
            throws IOException {
        checkDirectory();
        maxSeq = Math.max(maxSeq, seq);
        long offset = write.seal(key, seq, maxSeq, expireAt, version);
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
        Region region = new Region(id, path, write.channel(), write.fileSize()).owner(this);
        sealed.addLast(region);
        usedBytes += write.fileSize();
        summary.direct(RecordFormat.fingerprint(key), seq, id);
        return new DiskLocation(region, offset, key.length, Math.toIntExact(write.length()));
    }

    /** Deletes a region adopted from a direct write whose value lost a race to a newer version. Writer thread only. */
    public void discard(Region region) throws IOException {
        if (sealed.remove(region)) {
            usedBytes -= region.size();
            region.evict();
        }
    }

    /**
     * Starts a new region of the log, beginning with the seal that summarizes the one written before (RegionSummary).
     */
    private void rollOver() throws IOException {
        if (active != null) {
            flush();
            sealed.addLast(active);
            active = null;
        }
        checkDirectory();
        long before = summary.regionId();
        Region previous = before < 0 ? null : regionById(before);
        ByteBuffer payload = summary.payload(previous == null ? 0 : previous.size());
        Path path = Region.pathFor(dir, nextRegionId);
        FileChannel channel = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        active = new Region(nextRegionId++, path, channel, 0).owner(this);
        activeWritten = 0;
        writeBuffer.clear();
        bufferBase = 0;
        bufferFrom = 0;
        PendingRecord seal = PendingRecord.seal(maxSeq, payload);
        write(seal, seal.length());
        sealBytesWritten += seal.length();
        summary.restart(active.id());
    }

    private Region regionById(long id) {
        for (Region r : sealed) {
            if (r.id() == id) {
                return r;
            }
        }
        return active != null && active.id() == id ? active : null;
    }

    private void makeRoom(long length) throws IOException {
        while (usedBytes + length > budget && !sealed.isEmpty() && sealed.peekFirst().id() < keepFrom) {
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
        bufferFrom = 0;
        closeDirectWriter();
        if (active != null) {
            sealed.addLast(active);
            active = null;
        }
        for (Region r : sealed) {
            usedBytes -= r.size();
            r.evict();
        }
        sealed.clear();
        summary.restart(-1); // an empty log: the next region summarizes none
    }

    /**
     * Reads the record at {@code location} into {@code dst} (which needs {@link #readLength} bytes remaining),
     * verifies it, and returns a slice of {@code dst} holding just the value. The caller holds a region reference.
     *
     * <p>A record of {@link #DIRECT_READ_MIN} bytes or more is read with O_DIRECT where the filesystem allows it: the
     * 4 KiB blocks that hold it, into an aligned stretch of {@code dst}, straight from the device into {@code dst}
     * (no copy through the page cache, and nothing left there that the memory tier would hold twice). Linux writes
     * back dirty pages of the range first, so a record written moments ago through the page cache reads the same.
     *
     * @throws CorruptRecordException if the header or checksum does not match
     */
    public ByteBuffer read(DiskLocation location, byte[] expectedKey, ByteBuffer dst) throws IOException {
        int length = Math.toIntExact(location.recordLength());
        ByteBuffer buf = length >= DIRECT_READ_MIN && directIo ? readDirect(location, length, dst) : null;
        if (buf != null) {
            directReadCount.increment();
        } else {
            buf = dst.slice(dst.position(), length);
            if (!RecordFormat.readFully(location.region().channel(), buf, location.offset())) {
                throw new CorruptRecordException("record at " + location.region() + ":" + location.offset()
                        + " is cut short at " + buf.position() + " of " + length + " bytes");
            }
            buf.flip();
        }
        RecordFormat.Header h = RecordFormat.Header.parse(buf, 0, location.region().layout());
        if (!h.plausible(length) || h.keyLength() != location.keyLength() || h.valueLength() != location.valueLength()
                || !RecordFormat.verify(buf, 0, h)
                || !buf.slice(h.headerSize(), h.keyLength()).equals(ByteBuffer.wrap(expectedKey))) {
            throw new CorruptRecordException("record at " + location.region() + ":" + location.offset()
                    + " failed its checksum or header check");
        }
        return buf.slice(h.headerSize() + h.keyLength(), h.valueLength());
    }

    /**
     * Bytes a buffer needs to receive the record at {@code location} through {@link #read}: the alignment slack only
     * for a record large enough to be read directly (a small one is read as it is, through the page cache).
     */
    public static int readLength(DiskLocation location) {
        long length = location.recordLength();
        return Math.toIntExact(length >= DIRECT_READ_MIN ? length + READ_SLACK : length);
    }

    /**
     * Reads the aligned blocks around the record with O_DIRECT and returns the record's slice of {@code dst}; null
     * if this region cannot be read that way (the caller then reads through the page cache).
     */
    private static ByteBuffer readDirect(DiskLocation location, int length, ByteBuffer dst) throws IOException {
        FileChannel direct = location.region().directChannel();
        if (direct == null || !dst.isDirect()) {
            return null;
        }
        long start = location.offset() & -ALIGN;
        long end = (location.offset() + length + ALIGN - 1) & -ALIGN;
        ByteBuffer aligned = dst.slice(dst.position(), dst.remaining()).alignedSlice(ALIGN);
        if (aligned.capacity() < end - start) {
            return null;
        }
        ByteBuffer io = aligned.limit(Math.toIntExact(end - start));
        long need = location.offset() + length - start; // the last block may end past the file: a short read
        while (io.position() < need) {
            if ((io.position() & (ALIGN - 1)) != 0) { // a short read mid-file (never seen): finish through the cache
                ByteBuffer rest = io.duplicate().limit(Math.toIntExact(need));
                if (!RecordFormat.readFully(location.region().channel(), rest, start + io.position())) {
                    break;
                }
                io.position(rest.position());
                break;
            }
            int n = direct.read(io, start + io.position());
            if (n < 0) {
                break;
            }
        }
        if (io.position() < need) {
            throw new CorruptRecordException("record at " + location.region() + ":" + location.offset()
                    + " is cut short at " + Math.max(0, io.position() - (location.offset() - start)) + " of "
                    + length + " bytes");
        }
        return io.slice(Math.toIntExact(location.offset() - start), length);
    }

    /**
     * Verifies the record at {@code location} in pieces through {@code scratch}, for values too large to read
     * whole. The caller holds a region reference.
     *
     * @throws CorruptRecordException if the header, key or checksum does not match
     */
    public void verify(DiskLocation location, byte[] expectedKey, ByteBuffer scratch) throws IOException {
        RecordFormat.Layout layout = location.region().layout();
        ByteBuffer headerBuf = ByteBuffer.allocate(layout.headerSize());
        FileChannel channel = location.region().channel();
        boolean whole = RecordFormat.readFully(channel, headerBuf, location.offset());
        RecordFormat.Header h = RecordFormat.Header.parse(headerBuf.flip(), 0, layout);
        byte[] key = whole && h.valueLength() == location.valueLength()
                ? RecordFormat.readKey(channel, location.offset(), h, location.recordLength()) : null;
        if (key == null || !java.util.Arrays.equals(key, expectedKey)
                || !RecordFormat.valueIntact(channel, location.offset(), h, scratch)) {
            throw new CorruptRecordException("record at " + location.region() + ":" + location.offset()
                    + " failed its checksum or header check");
        }
    }

    /** Reads value bytes from {@code valueOffset} into {@code dst} (positional; no verification). */
    public void readValue(DiskLocation location, long valueOffset, ByteBuffer dst) throws IOException {
        long pos = location.offset() + location.valueStart() + valueOffset;
        if (!RecordFormat.readFully(location.region().channel(), dst, pos)) {
            throw new CorruptRecordException("record at " + location.region() + ":" + location.offset()
                    + " is cut short");
        }
    }

    /**
     * Flushes and forces everything to stable storage, then closes the files and releases the directory lock, even
     * if a flush fails (which it reports). Writer thread (or after it stopped).
     */
    @Override
    public void close() throws IOException {
        IOException failure = null;
        if (summary.regionId() >= 0 && !summary.isEmpty() && !directoryLost) {
            // One more region holding only the seal of the last one written: damage to that one is then found at
            // the next start like damage to any other (RegionSummary).
            try {
                rollOver();
            } catch (IOException | RuntimeException e) {
                log.warn("could not write the seal of region {} at close: damage to it will not be detectable ({})",
                        active, e.toString());
            }
        }
        if (active != null) {
            try {
                flush();
            } catch (IOException e) {
                failure = e;
            }
            if (active != null) {
                sealed.addLast(active);
                active = null;
            }
        }
        closeDirectWriter(); // its writes are in the file: the force below (any descriptor of it) makes them durable
        for (Region r : sealed) {
            try {
                r.channel().force(true);
            } catch (IOException e) {
                failure = failure == null ? e : failure;
            }
            r.release();
        }
        sealed.clear();
        released = true;
        lock.close();
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * Closes the files as a killed process leaves them: what the write buffer holds is dropped, nothing is forced,
     * the directory lock is released. After the writer thread stopped ({@link io.kvtier.store.TieredStore#crash}).
     */
    public void abandon() {
        writeBuffer.clear();
        bufferFrom = 0;
        closeDirectWriter();
        if (active != null) {
            sealed.addLast(active);
            active = null;
        }
        for (Region r : sealed) {
            r.release();
        }
        sealed.clear();
        released = true;
        try {
            lock.close();
        } catch (IOException e) {
            log.warn("could not release the data directory lock: {}", e.toString());
        }
    }

    /**
     * The directory was lost (see {@link #checkDirectory}): hands every region to the eviction callback, as if evicted,
     * so that what only it held is a miss from now on, and forgets them without touching a file (the path may now be
     * another node's). Writer thread only; the tier takes nothing afterwards.
     */
    void forgetAll() {
        writeBuffer.clear();
        bufferFrom = 0;
        closeDirectWriter();
        List<Region> all = regions();
        sealed.clear();
        active = null;
        for (Region r : all) {
            onEvict.accept(r);
            r.forget();
        }
        usedBytes = 0;
        released = true;
        directoryLost = true;
        try {
            lock.close();
        } catch (IOException e) {
            log.debug("could not release the lock of lost directory {}: {}", dir, e.toString());
        }
    }

    /** The directory this tier lives in. */
    public Path dir() {
        return dir;
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
