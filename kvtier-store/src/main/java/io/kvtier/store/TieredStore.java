package io.kvtier.store;

import io.kvtier.store.disk.CorruptRecordException;
import io.kvtier.store.disk.DirectWrite;
import io.kvtier.store.disk.DiskFullException;
import io.kvtier.store.disk.DiskLocation;
import io.kvtier.store.disk.DiskSet;
import io.kvtier.store.disk.DiskTier;
import io.kvtier.store.disk.PendingRecord;
import io.kvtier.store.disk.RecordFormat;
import io.kvtier.store.disk.RecoveryStats;
import io.kvtier.store.disk.RegionFiles;
import io.kvtier.store.memory.MemoryTier;
import io.kvtier.store.memory.MemoryValue;
import io.kvtier.store.policy.KvCachePolicy;
import io.kvtier.store.policy.TierPolicy;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * The tiering engine.
 *
 * Design. One index (Index, from key to Entry) covers both tiers. An entry is one immutable version of a
 * key's value; where its bytes live (memory copy, disk record, or both) is mutable state under the entry's monitor,
 * moving along the transition table in EntryState. Values arrive in memory reserved before the first payload byte
 * is read (MemoryTier: reserve before accept). When free memory falls below a watermark, the DiskWriter thread
 * takes victims from the S3-FIFO policy and appends them to the disk tier's log in batches of large sequential
 * writes, then drops their memory copy: eviction from memory is demotion, never loss. A disk hit is served by
 * reading and checksumming the record on an I/O thread; a second disk hit promotes the value back to memory while
 * keeping the disk record ("clean"), so demoting it again costs no write. Only the disk tier evicts for real, whole
 * regions at a time, oldest first, and counts what it dropped.
 *
 * Concurrency. Readers take a ValueRef under the entry monitor: a reference on the memory value or on the disk
 * region, so bytes are never freed or reused under a reader. Writers swap entries with index.compute, then retire
 * the old entry. Lock order: index bin -> entry monitor; policy lock -> entry monitor. No lock is held across I/O.
 * All disk writes (demotions, tombstones, expiry records, FLUSHALL) run on the single DiskWriter thread, so the log
 * order of a key's records follows the order of the operations that wrote them.
 *
 * Exactness across restarts. Every record carries a global sequence number. Overwriting or deleting a version that
 * is (or may be about to be) on disk appends a tombstone, and the reply waits until it is written, so a kill -9
 * can never resurrect an old value. Regions are evicted oldest first, so a tombstone outlives the records it
 * kills. Recovery (IndexBuilder) decides by sequence numbers alone. A kill -9 loses only values never demoted.
 *
 * Metadata budget. The index lives on the heap, about 200 bytes per small key (IndexBudget, measured by
 * IndexFootprintTest). Each key is charged when a write brings it into the index and refunded when it leaves
 * (unindex, or a remove/expire returning null from compute); a write of a new key past --index-memory fails with
 * IndexFullException (-OOM) before anything changes, while reads, overwrites and deletes go on. Recovery charges
 * every key it finds whatever the budget, so a restart never fails for want of budget; the launcher sizes the heap
 * so that a full budget recovers.
 *
 * Failure cases. A record failing its checksum is a miss, logged and dropped from the index; at recovery a damaged
 * record drops its key only if it may have superseded the key's newest intact record (RegionScanner's essay). A disk
 * write that fails leaves the entry in memory (DEMOTING -> MEMORY); no space evicts the oldest region and retries; any
 * other failure (read-only, I/O error, data directory deleted under the node) puts the DiskWriter in its fault state,
 * logged once, in which writers that need memory fail at once instead of waiting, and demotion is retried every
 * second. A writer waiting for memory longer than memoryWaitMillis fails with StoreFullException rather than hanging.
 * At close, the shutdown flush writes every memory-only value it can without evicting what it wrote itself (older
 * regions are evicted for it as for any demotion); if values remain only in memory, close logs one ERROR line with
 * their count and bytes and throws ShutdownLossException, and the server exits 1.
 *
 * Expiry. Reads treat a key as absent from its deadline on; the ExpiryWheel (a hierarchical timer wheel threaded
 * through the entries) removes it within ~0.5 s after, doing work only for keys that are due.
 *
 * References: S3-FIFO (Yang et al., SOSP 2023); CacheLib's Navy BlockCache (region eviction); Bitcask (recovery by
 * log scan).
 */
/** A two-tier key-value store (off-heap memory over a disk log); see the essay above. Thread-safe. */
public final class TieredStore implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TieredStore.class);

    final StoreOptions options;
    final Index index = new Index();
    final MemoryTier memory;
    final DiskSet disk;
    final StoreCounters counters = new StoreCounters();
    final ReentrantLock policyLock = new ReentrantLock();
    final TierPolicy policy;                      // guarded by policyLock
    final AtomicLong sequence = new AtomicLong();
    final IndexBudget indexBudget;
    private final MemoryWaiters waiters;
    final ExpiryWheel expiry = new ExpiryWheel(System.currentTimeMillis());
    private final ScheduledExecutorService timer;
    private final java.util.concurrent.ExecutorService directWrites;
    final DiskWriter writer;
    private final RecoveryStats recovery;
    private final long droppedForDamage;
    private final long maxRecoveredVersion;
    final KeyListener listener;
    private final Pins pins;
    private final CrashAccount crashAccount;
    private volatile boolean closed;

    private TieredStore(StoreOptions options, KeyListener listener) throws IOException {
        this.options = options;
        this.listener = listener;
        this.pins = new Pins(options.pinBytes());
        this.indexBudget = new IndexBudget(options.indexBytes());
        this.memory = new MemoryTier(options.memoryBytes(), options.sharedMemory());
        this.policy = memoryPolicy(memory.budget());
        this.writer = new DiskWriter(this);
        IndexBuilder builder = new IndexBuilder(index);
        RecoveryStats[] stats = new RecoveryStats[1];
        try {
            this.disk = DiskSet.open(options.diskDirs(), diskBudgets(options), writer::onRegionEvicted, builder,
                    s -> stats[0] = s);
        } catch (IOException | RuntimeException e) {
            memory.close();
            throw e;
        }
        this.recovery = stats[0];
        long expiredAtStart = builder.build(System.currentTimeMillis(), counters, e -> {
            indexBudget.forceCharge(e.keyBytes.length);
            listener.added(e.keyBytes, e.length, Residence.DISK);
            writer.track(e, e.disk);
            if (e.expireAt != 0) {
                expiry.schedule(e);
            }
        });
        sequence.set(Math.max(builder.maxSeq(), recovery.maxSeq())); // past damaged records' numbers too
        this.maxRecoveredVersion = builder.maxVersion();
        this.waiters = new MemoryWaiters(memory, options.memoryWaitMillis(), writer::wake,
                () -> writer.fault() == null ? null : futileWait(writer.fault()));
        memory.onFree(waiters::serve);
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "kvtier-store-timer"));
        this.directWrites = Executors.newFixedThreadPool(2, r -> daemon(r, "kvtier-direct-write"));
        timer.scheduleWithFixedDelay(this::expireDue, 250, 250, TimeUnit.MILLISECONDS);
        timer.scheduleWithFixedDelay(waiters::expireOverdue, 100, 100, TimeUnit.MILLISECONDS);
        timer.scheduleWithFixedDelay(this::endDuePins, 100, 100, TimeUnit.MILLISECONDS);
        this.crashAccount = new CrashAccount(options.dir());
        crashAccount.running(0, 0);
        timer.scheduleWithFixedDelay(this::accountForCrash, 1, 1, TimeUnit.SECONDS);
        writer.start();
        log.info("recovered {} keys ({} records, {} bytes) from {} regions in {} ms; dropped {} torn or corrupt "
                        + "records ({} bytes); {} keys had expired", index.size(), recovery.records(),
                recovery.bytes(), recovery.regions(), recovery.millis(), recovery.droppedRecords(),
                recovery.droppedBytes(), expiredAtStart);
        this.droppedForDamage = builder.droppedForDamage();
        if (recovery.damagedRegions() > 0) {
            log.error("{} regions are damaged (quarantined as region-*.damaged.kvr); {} keys were dropped because a "
                    + "damaged record may have deleted or overwritten them", recovery.damagedRegions(),
                    builder.droppedForDamage());
        }
        if (indexBudget.isOver()) {
            log.warn("the recovered index takes {} bytes, over its budget of {} bytes (--index-memory): reads are "
                    + "served, writes of new keys fail with OOM until keys are deleted", indexBudget.used(),
                    indexBudget.budget());
        }
    }

    /**
     * Each disk directory's share of --disk, or less if its filesystem cannot hold it (see RegionFiles#budgetFor);
     * refuses to start below the minimum disk budget in all, or with a directory that cannot hold two regions, and
     * warns when memory exceeds the disk budget (a graceful stop with full memory then loses data).
     */
    private static long[] diskBudgets(StoreOptions options) throws IOException {
        List<Path> dirs = options.diskDirs();
        long[] budgets = new long[dirs.size()];
        long total = 0;
        for (int i = 0; i < budgets.length; i++) {
            budgets[i] = RegionFiles.budgetFor(dirs.get(i), options.diskBytes() / budgets.length);
            total += budgets[i];
            if (budgets[i] < StoreOptions.MIN_DISK_PER_DIRECTORY) {
                throw new IOException("the filesystem of " + dirs.get(i).toAbsolutePath() + " has room for "
                        + budgets[i] + " bytes of regions, below the " + StoreOptions.MIN_DISK_PER_DIRECTORY
                        + " bytes a disk directory needs");
            }
        }
        if (total < StoreOptions.MIN_DISK) {
            throw new IOException("the filesystem" + (dirs.size() > 1 ? "s of " + dirs : " of "
                    + dirs.get(0).toAbsolutePath()) + " have room for " + total + " bytes of regions, below the "
                    + "minimum disk budget of " + StoreOptions.MIN_DISK + " bytes");
        }
        if (options.memoryBytes() > total) {
            log.warn("--memory {} bytes is more than the disk budget of {} bytes: a graceful stop with full memory "
                    + "cannot write all of it to disk and will report what it loses", options.memoryBytes(), total);
        }
        return budgets;
    }

    /**
     * The memory tier's eviction order: {@link KvCachePolicy} (KV-cache chunks least recently used, small values
     * S3-FIFO), or with {@code -Dkvtier.memory.policy=s3fifo} plain S3-FIFO for everything, which keeps more in a
     * memory that holds under about 5% of the chunks (docs/simulate.md, "Eviction policies compared").
     */
    private static TierPolicy memoryPolicy(long budget) {
        String name = System.getProperty("kvtier.memory.policy", "kvtier");
        return switch (name) {
            case "kvtier" -> new KvCachePolicy(budget, TieringRules.MAX_GHOSTS);
            case "s3fifo" -> {
                log.info("memory tier: plain S3-FIFO for every value (kvtier.memory.policy=s3fifo)");
                yield new io.kvtier.store.policy.S3FifoPolicy(budget, TieringRules.MAX_GHOSTS);
            }
            default -> throw new IllegalArgumentException("kvtier.memory.policy=" + name + ": kvtier or s3fifo");
        };
    }

    /** Opens (recovering if present) the store in {@code options.dir()}. */
    public static TieredStore open(StoreOptions options) throws IOException {
        return new TieredStore(options, KeyListener.NONE);
    }

    /** Opens the store, telling {@code listener} of every key recovered, written and removed from now on. */
    public static TieredStore open(StoreOptions options, KeyListener listener) throws IOException {
        return new TieredStore(options, listener);
    }

    static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    public StoreOptions options() {
        return options;
    }

    public RecoveryStats recovery() {
        return recovery;
    }

    /**
     * The highest cluster version among the values recovered at start-up (0 if none had one): a node issuing new
     * versions starts above it.
     */
    public long maxRecoveredVersion() {
        return maxRecoveredVersion;
    }

    /**
     * Whether the store stopped cleanly before this start; if not (a crash, kill -9 or power loss), what was only in
     * memory then is lost: at most {@link #lostAtCrashKeys()} values of {@link #lostAtCrashBytes()} bytes.
     */
    public boolean previousStopClean() {
        return crashAccount.previous().clean();
    }

    /** Values (at most) only in memory when the store last stopped uncleanly; 0 after a clean stop. */
    public long lostAtCrashKeys() {
        return crashAccount.previous().clean() ? 0 : crashAccount.previous().keys();
    }

    /** Their bytes (at most). */
    public long lostAtCrashBytes() {
        return crashAccount.previous().clean() ? 0 : crashAccount.previous().bytes();
    }

    /** The store's timer, once a second: what a crash now would lose, at most (see {@link CrashAccount}). */
    private void accountForCrash() {
        try {
            if (!directoryStillOurs()) {
                return;
            }
            crashAccount.running(counters.entries(EntryState.MEMORY) + counters.entries(EntryState.DEMOTING),
                    counters.bytes(EntryState.MEMORY) + counters.bytes(EntryState.DEMOTING));
        } catch (RuntimeException ex) {
            log.debug("crash accounting failed: {}", ex.toString());
        }
    }

    /**
     * Whether the data directory is still the one this store locked: once it was deleted or replaced, another node
     * may own the path, and the crash account must not land in its directory (DiskTier#checkDirectory).
     */
    private boolean directoryStillOurs() {
        try {
            disk.checkFirstDirectory();
            return true;
        } catch (io.kvtier.store.disk.DataDirLostException e) {
            return false;
        }
    }

    /** Keys recovery did not serve because a damaged record may have deleted or overwritten them (RegionScanner). */
    public long keysDroppedForDamage() {
        return droppedForDamage;
    }

    // ---- shared memory (KVC.SHM) ------------------------------------------------------------------------------

    /** Whether the memory tier's slabs are memfds that clients on the same host may map (--shm). */
    public boolean sharedMemory() {
        return memory.shared();
    }

    /** Slabs the memory tier may have; each is {@link #slabBytes} long once mapped. */
    public int slabCount() {
        return memory.slabCount();
    }

    /** Slab {@code slab}'s memfd in this process ({@code /proc/PID/fd/FD} for a client), or -1 if not mapped yet. */
    public int slabFd(int slab) {
        return memory.slabFd(slab);
    }

    public long slabBytes(int slab) {
        return memory.slabBytes(slab);
    }

    // ---- writes -------------------------------------------------------------------------------------------------

    /**
     * Reserves memory for an incoming value of {@code length} bytes, waiting (without blocking the caller) while the
     * demoter makes room. The future fails with {@link StoreFullException} if memory stays full past the wait limit.
     *
     * @throws StoreFullException at once if the value can never fit (larger than the maximum value size or what the
     *         disk tier can hold)
     * @throws IllegalArgumentException if the value is too large for memory ({@link #bypassesMemory}): it must go
     *         through {@link #openDirectWrite}
     */
    public CompletableFuture<MemoryValue> allocate(long length) {
        checkStorable(length);
        if (writer.fault() != null) { // no demotion can make room: waiting would only fail later
            MemoryValue now = waiters.tryAllocate(length);
            if (now == null) {
                throw bothTiersFull(length);
            }
            return CompletableFuture.completedFuture(now);
        }
        return waiters.allocate(length);
    }

    private StoreFullException bothTiersFull(long length) {
        return new StoreFullException("memory has no room for " + length + " bytes and the disk tier cannot take "
                + "writes (" + writer.fault() + ")");
    }

    /** The disk writer entered the fault state: writers queued for memory would wait in vain, so they fail now. */
    void diskFaulted(String why) {
        waiters.failAll(futileWait(why));
    }

    private static String futileWait(String why) {
        return "memory is full and the disk tier cannot take writes (" + why + ")";
    }

    /**
     * Reserves memory now if there is room and nobody is waiting ahead, else returns null.
     *
     * @throws StoreFullException if the value can never fit, as {@link #allocate} does
     */
    public MemoryValue tryAllocate(long length) {
        checkStorable(length);
        return waiters.tryAllocate(length);
    }

    private void checkStorable(long length) {
        checkMaxValue(length);
        if (bypassesMemory(length)) {
            throw new IllegalArgumentException("value of " + length + " bytes goes straight to disk: use "
                    + "openDirectWrite");
        }
        if (length + RecordFormat.HEADER_SIZE + RecordFormat.MAX_KEY_LENGTH > disk.maxRecordLength()) {
            throw tooLargeForDisk(length);
        }
    }

    private void checkMaxValue(long length) {
        if (length > options.maxValueBytes()) {
            throw new StoreFullException("value of " + length + " bytes exceeds the maximum value size of "
                    + options.maxValueBytes() + " bytes (--max-value)");
        }
    }

    private StoreFullException tooLargeForDisk(long length) {
        return new StoreFullException("value of " + length + " bytes exceeds what the disk tier can hold ("
                + disk.maxRecordLength() + " bytes, --disk)");
    }

    /** Whether a value of {@code length} bytes is too large for the memory tier (over half its budget). */
    public boolean bypassesMemory(long length) {
        return TieringRules.bypassesMemory(length, memory.budget());
    }

    /**
     * Starts receiving a value too large for memory straight into the disk tier; finish with {@link #putDirect}
     * or {@link DirectWrite#abort()}.
     */
    public DirectWrite openDirectWrite(long length) {
        checkMaxValue(length);
        try {
            return disk.openDirectWrite(length, directWrites);
        } catch (DiskFullException e) {
            throw tooLargeForDisk(length);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /**
     * Stores a value received by {@code write} under {@code key}, once all of it is on disk. The NX/XX condition is
     * checked when the value has fully arrived. Completes when the value (and any tombstone) is written.
     */
    public CompletableFuture<PutResult> putDirect(byte[] keyBytes, DirectWrite write, PutOptions opts) {
        if (keyBytes.length > RecordFormat.MAX_KEY_LENGTH) {
            write.abort();
            throw new KeyTooLongException(keyBytes.length);
        }
        Key key = new Key(keyBytes);
        return write.finish().thenCompose(done -> writer.call(() -> publishDirect(key, write, opts)))
                .thenCompose(f -> f)
                .whenComplete((r, e) -> {
                    if (e != null) {
                        write.abort(); // no-op once adopted: the file then belongs to the disk tier
                    }
                });
    }

    /*
     * Runs on the writer thread. The record must carry its sequence number before it can be published, and sealing
     * and renaming take milliseconds, too long to hold the key's bin lock. So the number is taken first and the
     * publish re-checks under the lock: if a newer version (higher number) or a failed NX/XX condition appeared in
     * the meantime, this version loses and its region is discarded at once, so a restart cannot bring it back.
     */
    private CompletableFuture<PutResult> publishDirect(Key key, DirectWrite write, PutOptions opts) {
        long seq = sequence.incrementAndGet();
        long now = System.currentTimeMillis();
        Entry before = index.get(key);
        long expireAt = opts.keepTtl() && before != null && !before.isExpired(now) ? before.expireAt
                : opts.expireAt();
        DiskLocation loc;
        try {
            loc = disk.adopt(write, key.bytes, seq, expireAt, opts.version());
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        Entry e = new Entry(key, seq, write.length(), expireAt, EntryState.DISK, opts.version());
        e.disk = loc;
        Entry[] replaced = new Entry[1];
        ValueRef[] old = new ValueRef[1];
        boolean[] newerExists = new boolean[1];
        boolean[] won = new boolean[1];
        boolean[] full = new boolean[1];
        index.compute(key, (k, current) -> {
            Entry live = current != null && !current.isExpired(now) ? current : null;
            if (opts.returnOld() && live != null && live.seq < seq) {
                old[0] = ValueRef.retain(live);
            }
            if (current != null && current.seq > seq) {
                newerExists[0] = true;
                return current;
            }
            if (opts.condition() == PutOptions.Condition.IF_ABSENT && live != null
                    || opts.condition() == PutOptions.Condition.IF_PRESENT && live == null) {
                return current;
            }
            if (current == null && !indexBudget.tryCharge(k.bytes.length)) {
                full[0] = true;
                return null;
            }
            replaced[0] = current;
            won[0] = true;
            return e;
        });
        if (full[0]) {
            discardAdopted(loc);
            throw indexBudget.full();
        }
        if (!won[0]) {
            discardAdopted(loc);
            // A newer version won: this one counts as written and then overwritten. A failed condition: not written.
            return CompletableFuture.completedFuture(new PutResult(newerExists[0], old[0]));
        }
        counters.created(EntryState.DISK, e.length);
        added(e);
        writer.track(e, loc);
        if (expireAt != 0) {
            expiry.schedule(e);
        }
        CompletableFuture<Void> durable = replaced[0] == null ? CompletableFuture.completedFuture(null)
                : retire(replaced[0], seq, KeyListener.Removal.REPLACED);
        ValueRef previous = old[0];
        return closingOnFailure(durable, previous).thenApply(v -> new PutResult(true, previous));
    }

    private void discardAdopted(DiskLocation loc) {
        try {
            disk.discard(loc.region());
        } catch (IOException ex) {
            log.error("could not delete the region of a superseded large value: {}", ex.toString());
        }
    }

    /**
     * Stores {@code value} (whose reference the store takes over) under {@code key}. Completes once the write is
     * as durable as the store promises: immediately for a fresh key, after a tombstone write when an older version
     * is on disk.
     */
    public CompletableFuture<PutResult> put(byte[] keyBytes, MemoryValue value, PutOptions opts) {
        if (keyBytes.length > RecordFormat.MAX_KEY_LENGTH) {
            value.release();
            throw new KeyTooLongException(keyBytes.length);
        }
        if (value.written() != value.length()) {
            value.release();
            throw new IllegalArgumentException("value has " + value.written() + " of " + value.length() + " bytes");
        }
        Key key = new Key(keyBytes);
        long now = System.currentTimeMillis();
        Entry[] replaced = new Entry[1];
        Entry[] created = new Entry[1];
        ValueRef[] old = new ValueRef[1];
        boolean[] full = new boolean[1];
        index.compute(key, (k, current) -> {
            Entry live = current != null && !current.isExpired(now) ? current : null;
            if (opts.returnOld() && live != null) {
                old[0] = ValueRef.retain(live);
            }
            if (opts.condition() == PutOptions.Condition.IF_ABSENT && live != null
                    || opts.condition() == PutOptions.Condition.IF_PRESENT && live == null) {
                return current;
            }
            if (current == null && !indexBudget.tryCharge(k.bytes.length)) {
                full[0] = true;
                return null;
            }
            long expireAt = opts.keepTtl() && live != null ? live.expireAt : opts.expireAt();
            Entry e = new Entry(key, sequence.incrementAndGet(), value.length(), expireAt, EntryState.MEMORY,
                    opts.version());
            e.memory = value;
            counters.created(EntryState.MEMORY, e.length);
            replaced[0] = current;
            created[0] = e;
            return e;
        });
        if (created[0] == null) {
            value.release();
            if (full[0]) {
                throw indexBudget.full();
            }
            return CompletableFuture.completedFuture(new PutResult(false, old[0]));
        }
        Entry e = created[0];
        added(e);
        admit(e);
        if (e.expireAt != 0) {
            expiry.schedule(e);
        }
        writer.wakeIfPressured();
        CompletableFuture<Void> durable = replaced[0] == null ? CompletableFuture.completedFuture(null)
                : retire(replaced[0], e.seq, KeyListener.Removal.REPLACED);
        ValueRef previous = old[0];
        return closingOnFailure(durable, previous).thenApply(v -> new PutResult(true, previous));
    }

    /** Removes {@code key}; with {@code returnOld}, hands back a reference to its value. */
    public CompletableFuture<Removed> remove(byte[] keyBytes, boolean returnOld) {
        return remove(keyBytes, returnOld, Long.MAX_VALUE);
    }

    /**
     * Removes {@code key} if its version was written before sequence number {@code seq}: a cleanup decided at
     * {@code seq} never deletes a version written after it.
     */
    public CompletableFuture<Removed> removeIfOlder(byte[] keyBytes, long seq) {
        return remove(keyBytes, false, seq);
    }

    private CompletableFuture<Removed> remove(byte[] keyBytes, boolean returnOld, long olderThan) {
        Key key = new Key(keyBytes);
        Entry[] removed = new Entry[1];
        long[] tombstoneSeq = new long[1];
        index.computeIfPresent(key, (k, e) -> {
            if (e.seq >= olderThan) {
                return e;
            }
            removed[0] = e;
            // Under the key's bin lock, like put's: a concurrent put's version is numbered after this tombstone.
            tombstoneSeq[0] = sequence.incrementAndGet();
            indexBudget.refund(k.bytes.length);
            return null;
        });
        Entry e = removed[0];
        if (e == null) {
            return CompletableFuture.completedFuture(Removed.NOTHING);
        }
        boolean expired = e.isExpiredNow();
        ValueRef old = returnOld && !expired ? ValueRef.retain(e) : null;
        return closingOnFailure(retire(e, tombstoneSeq[0], KeyListener.Removal.DELETED), old)
                .thenApply(v -> expired ? Removed.NOTHING : new Removed(true, old));
    }

    /** Removes {@code e} from the index if it is still its key's version, refunding the key's budget; returns whether it did. */
    boolean unindex(Entry e) {
        boolean removed = index.remove(e);
        if (removed) {
            indexBudget.refund(e.keyBytes.length);
        }
        return removed;
    }

    /** Passes {@code f} through, closing {@code ref} (if any) should it fail, so no reader reference leaks. */
    private static <T> CompletableFuture<T> closingOnFailure(CompletableFuture<T> f, ValueRef ref) {
        if (ref == null) {
            return f;
        }
        return f.whenComplete((v, e) -> {
            if (e != null) {
                ref.close();
            }
        });
    }

    /**
     * Takes a version out of service: frees its memory copy (once readers let go) and, if it is or may become a disk
     * record, appends a tombstone with sequence {@code tombstoneSeq} (none if negative: the caller deletes the log
     * itself). Completes when that tombstone is written.
     */
    private CompletableFuture<Void> retire(Entry e, long tombstoneSeq, KeyListener.Removal why) {
        boolean tombstone;
        MemoryValue mem;
        synchronized (e) {
            if (!e.state().isLive()) {
                return CompletableFuture.completedFuture(null);
            }
            tombstone = tombstoneSeq >= 0 && e.mayBeOnDisk();
            mem = e.memory;
            e.memory = null;
            e.moveTo(EntryState.DELETED, counters);
        }
        if (mem != null) {
            policyLock.lock();
            try {
                policy.remove(e);
            } finally {
                policyLock.unlock();
            }
            mem.release();
        }
        gone(e, why, tombstoneSeq >= 0 ? tombstoneSeq : sequence.get());
        return tombstone ? writer.journal(PendingRecord.tombstone(e.keyBytes, tombstoneSeq), e)
                : CompletableFuture.completedFuture(null);
    }

    /**
     * Sets (epoch millis) or clears (0) the expiry of {@code key} if {@code condition} allows; an expiry in the past
     * deletes the key. Completes with whether anything changed, once the change is durable.
     */
    public CompletableFuture<Boolean> setExpiry(byte[] keyBytes, long expireAt, ExpireCondition condition) {
        Key key = new Key(keyBytes);
        Entry e = index.get(key);
        long now = System.currentTimeMillis();
        if (e == null || e.isExpired(now)) {
            return CompletableFuture.completedFuture(false);
        }
        boolean journal;
        long expirySeq = -1;
        synchronized (e) {
            if (!e.state().isLive() || !condition.allows(e.expireAt, expireAt)
                    || expireAt == 0 && e.expireAt == 0) {
                return CompletableFuture.completedFuture(false);
            }
            if (expireAt != 0 && expireAt <= now) {
                journal = false;
            } else {
                e.expireAt = expireAt;
                journal = e.mayBeOnDisk();
                expirySeq = sequence.incrementAndGet(); // under the monitor: record order follows change order
            }
        }
        if (expireAt != 0 && expireAt <= now) {
            return remove(keyBytes, false).thenApply(Removed::existed);
        }
        expiry.schedule(e); // a new deadline, or none (PERSIST)
        try {
            listener.changed(key.bytes);
        } catch (RuntimeException ex) {
            log.error("key listener failed on an expiry change", ex);
        }
        return journal ? writer.journal(PendingRecord.expiry(key.bytes, expirySeq, expireAt, e.seq), e)
                .thenApply(v -> true) : CompletableFuture.completedFuture(true);
    }

    /**
     * Raises the cluster version of {@code key}'s current value to {@code version} (a primary re-stamping a write it
     * replicates again, or every key a command wrote getting that command's version); nothing if the key is absent or
     * its version is already at least that. In memory only: a value already on disk keeps the version its record
     * carries, which after a restart makes it differ from its copies elsewhere and be copied again, never wrong.
     * Returns whether it changed.
     */
    public boolean setVersion(byte[] keyBytes, long version) {
        Entry e = index.get(new Key(keyBytes));
        if (e == null) {
            return false;
        }
        synchronized (e) {
            if (!e.state().isLive() || e.version >= version) {
                return false;
            }
            e.version = version;
            return true;
        }
    }

    /** Deletes every key and every region file. */
    public CompletableFuture<Void> clear() {
        return writer.submit(() -> {
            index.forEach(e -> {
                if (unindex(e)) { // only this version, never one put meanwhile
                    retire(e, -1, KeyListener.Removal.DELETED);
                }
            });
            writer.dropAllRegions();
        });
    }

    // ---- reads --------------------------------------------------------------------------------------------------

    /** A reference to the live value of {@code key}, or null. The caller must close it. */
    public ValueRef get(byte[] keyBytes) {
        return get(keyBytes, true);
    }

    /**
     * As {@link #get(byte[])}; with {@code touch} false (a client in CLIENT NO-TOUCH mode) the read leaves the eviction
     * policy as it was: it records no access, and its disk read does not count toward promotion to memory.
     */
    public ValueRef get(byte[] keyBytes, boolean touch) {
        Entry e = index.get(new Key(keyBytes));
        if (e == null) {
            counters.misses.increment();
            return null;
        }
        if (e.isExpiredNow()) {
            expire(e);
            counters.misses.increment();
            return null;
        }
        ValueRef ref = ValueRef.retain(e, touch);
        if (ref == null) {
            counters.misses.increment();
        } else if (ref.inMemory()) {
            if (touch) {
                touched(e);
                if (e.prefetched()) {
                    usedPrefetch(e);
                }
            }
            counters.memoryHits.increment();
        } else {
            counters.diskHits.increment();
        }
        return ref;
    }

    /**
     * Reads a disk-resident value into {@code dst} (at least {@link ValueRef#diskReadLength()} bytes remaining)
     * and returns the slice of {@code dst} holding it (anywhere in it: a direct read aligns the record). Blocking: call from an I/O thread, never an event loop. A record that fails
     * its checksum is dropped from the index and reported as {@link CorruptRecordException} (a miss, never bytes).
     */
    public ByteBuffer readFromDisk(ValueRef ref, ByteBuffer dst) throws IOException {
        Entry e = ref.entry;
        DiskLocation loc = ref.disk;
        ByteBuffer value;
        try {
            value = disk.read(loc, e.keyBytes, dst);
        } catch (CorruptRecordException ex) {
            dropCorrupt(e, loc, ex);
            throw ex;
        }
        counters.diskReadBytes.add(e.length);
        if (ref.touch) {
            maybePromote(e, loc, value);
        }
        return value;
    }

    /** A record at {@code loc} failed its checksum: counted, logged, {@code e} dropped if that was its only copy. */
    private void dropCorrupt(Entry e, DiskLocation loc, CorruptRecordException ex) {
        counters.corruptReads.increment();
        log.error("dropping key of {} bytes: {}", e.length, ex.getMessage());
        boolean gone;
        synchronized (e) {
            gone = e.disk == loc && e.memory == null && e.state() == EntryState.DISK;
            if (gone) {
                e.moveTo(EntryState.EVICTED, counters);
            } else if (e.disk == loc && e.state().isLive()) {
                e.disk = null; // a deleted version keeps it: its tombstone goes where the record is (DiskSet)
            }
        }
        if (gone) {
            unindex(e);
            gone(e, KeyListener.Removal.LOST, sequence.get());
        }
    }

    private void maybePromote(Entry e, DiskLocation loc, ByteBuffer value) {
        if (bypassesMemory(e.length)) {
            return;
        }
        synchronized (e) {
            if (e.diskHit() < TieringRules.PROMOTE_AFTER_DISK_HITS && !pins.contains(e) || e.state() != EntryState.DISK
                    || e.disk != loc) {
                return;
            }
        }
        MemoryValue mem = waiters.tryAllocate(e.length);
        if (mem == null && pins.contains(e)) {
            mem = awaitMemory(e.length); // a pinned value must get back into memory: wait (briefly) for the demoter
        }
        if (mem != null && toMemory(e, loc, mem, value, false)) {
            counters.promotions.increment();
        }
    }

    /**
     * Gives {@code e}, read from {@code loc} as {@code value}, the memory copy {@code mem} (a promotion or a prefetch,
     * which counts as one access and is remembered until read): false, and {@code mem} released, if the entry left
     * that disk location meanwhile (deleted, overwritten, evicted, promoted by another read).
     */
    private boolean toMemory(Entry e, DiskLocation loc, MemoryValue mem, ByteBuffer value, boolean prefetch) {
        mem.write(value.duplicate());
        boolean promoted;
        synchronized (e) {
            promoted = e.state() == EntryState.DISK && e.disk == loc;
            if (promoted) {
                e.memory = mem;
                e.moveTo(EntryState.MEMORY, counters);
                e.prefetched(prefetch);
            }
        }
        if (!promoted) {
            mem.release();
            return false;
        }
        admit(e);
        if (prefetch) {
            e.recordAccess(); // its read is on its way: on probation it moves to main instead of leaving memory unread
        }
        moved(e, Residence.MEMORY);
        writer.wakeIfPressured();
        return true;
    }

    private void usedPrefetch(Entry e) {
        synchronized (e) {
            if (!e.prefetched()) {
                return;
            }
            e.prefetched(false);
        }
        counters.prefetchUsed.increment();
    }

    /** What {@link #prefetch} did with one key. */
    public enum Prefetch {
        /** Copied from disk into memory. */
        PROMOTED,
        /** Already in memory. */
        RESIDENT,
        /** No such key. */
        MISSING,
        /** Too large for memory (it bypasses the memory tier), or for a prefetch (over {@code maxBytes}). */
        TOO_LARGE,
        /** Memory has no room now, or writers wait for it: a prefetch never waits, nor goes before them. */
        NO_ROOM
    }

    /**
     * Copies {@code key}'s value from disk back into memory ahead of a read (KVC.PREFETCH), if memory has room now:
     * it never waits for memory and never goes before a writer waiting for it. The demoter then restores its free
     * watermark as after any write, demoting the policy's coldest values (a value about to be read is hotter than
     * they are; pinned ones never leave). It counts as one access (its read is on its way: S3-FIFO's probation then
     * moves it to main rather than out of memory, which wasted 1 of 32 prefetched 16 MiB chunks), and as no disk hit.
     * A value read later from memory counts as a used prefetch, one that leaves memory unread as a wasted one.
     * Blocking (a disk read): I/O threads only.
     *
     * @param staging gives a buffer of at least the asked bytes for the disk read (DiskTier#readLength); the
     *                caller owns it again once this returns
     */
    public Prefetch prefetch(byte[] keyBytes, long maxBytes, java.util.function.IntFunction<ByteBuffer> staging)
            throws IOException {
        Entry e = index.get(new Key(keyBytes));
        if (e == null || e.isExpiredNow()) {
            return Prefetch.MISSING;
        }
        if (bypassesMemory(e.length) || e.length > maxBytes) {
            return Prefetch.TOO_LARGE;
        }
        DiskLocation loc;
        synchronized (e) {
            if (e.state() != EntryState.DISK) {
                return e.state() == EntryState.MEMORY || e.state() == EntryState.DEMOTING ? Prefetch.RESIDENT
                        : Prefetch.MISSING;
            }
            loc = e.disk;
        }
        MemoryValue mem = waiters.tryAllocate(e.length);
        if (mem == null) {
            return Prefetch.NO_ROOM;
        }
        ByteBuffer value;
        try {
            value = disk.read(loc, e.keyBytes, staging.apply(DiskTier.readLength(loc)));
        } catch (CorruptRecordException ex) {
            mem.release();
            dropCorrupt(e, loc, ex);
            return Prefetch.MISSING;
        } catch (IOException | RuntimeException ex) {
            mem.release();
            throw ex;
        }
        counters.diskReadBytes.add(e.length);
        if (!toMemory(e, loc, mem, value, true)) {
            return Prefetch.MISSING; // deleted, overwritten or evicted meanwhile: there is nothing to prefetch now
        }
        counters.prefetched.increment();
        return Prefetch.PROMOTED;
    }

    /** Memory for {@code length} bytes within at most 5 s (blocking: I/O threads only), or null. */
    private MemoryValue awaitMemory(long length) {
        CompletableFuture<MemoryValue> f = allocate(length);
        try {
            return f.get(Math.min(5_000, options.memoryWaitMillis()), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException ex) {
            f.cancel(false); // leave the waiters' queue, so writers behind are served
            f.thenAccept(MemoryValue::release); // granted after all: give it back
            return null;
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            f.cancel(false);
            f.thenAccept(MemoryValue::release);
            return null;
        }
    }

    /**
     * Verifies a disk-resident value too large to read whole, through {@code scratch}; a corrupt record is dropped
     * like in {@link #readFromDisk}. Blocking: I/O threads only.
     */
    public void verifyOnDisk(ValueRef ref, ByteBuffer scratch) throws IOException {
        try {
            disk.verify(ref.disk, ref.entry.keyBytes, scratch);
        } catch (CorruptRecordException ex) {
            dropCorrupt(ref.entry, ref.disk, ex);
            throw ex;
        }
        counters.diskReadBytes.add(ref.entry.length);
    }

    /** Reads bytes of a verified disk-resident value from {@code offset} into {@code dst}. I/O threads only. */
    public void readDiskValue(ValueRef ref, long offset, ByteBuffer dst) throws IOException {
        disk.readValue(ref.disk, offset, dst);
    }

    /** Whether {@code key} exists (and is not expired). */
    public boolean exists(byte[] keyBytes) {
        Entry e = index.get(new Key(keyBytes));
        return e != null && !expireIfDue(e);
    }

    /** Like {@link #exists} but also counts as an access for the policy (TOUCH). */
    public boolean touch(byte[] keyBytes) {
        Entry e = index.get(new Key(keyBytes));
        if (e == null || expireIfDue(e)) {
            return false;
        }
        touched(e);
        return true;
    }

    /**
     * A hit for the policy: a chunk it orders by recency moves, if the policy lock is free right now; otherwise, and for
     * everything else, a lock-free count (the sweep gives a counted chunk another round).
     */
    private void touched(Entry e) {
        e.read = 1;
        if (policy.ordersOnTouch(e) && policyLock.tryLock()) {
            try {
                if (e.isQueued()) {
                    policy.touch(e);
                }
            } finally {
                policyLock.unlock();
            }
        } else {
            e.recordAccess();
        }
    }

    /** Length of the value of {@code key}, or -1 if absent. */
    public long length(byte[] keyBytes) {
        Entry e = index.get(new Key(keyBytes));
        return e == null || expireIfDue(e) ? -1 : e.length;
    }

    /** Expiry of {@code key} in epoch millis: 0 = none, -1 = no such key. */
    public long expireAt(byte[] keyBytes) {
        Entry e = index.get(new Key(keyBytes));
        return e == null || expireIfDue(e) ? -1 : e.expireAt;
    }

    /** Number of keys (including expired ones not yet swept, as Redis's DBSIZE). */
    public long size() {
        return index.size();
    }

    /** Visits every live key; weakly consistent with concurrent writes. Walks the whole index: not on an event loop. */
    public void forEachKey(Consumer<byte[]> visitor) {
        long now = System.currentTimeMillis();
        index.forEach(e -> {
            if (!e.isExpired(now)) {
                visitor.accept(e.keyBytes);
            }
        });
    }

    /**
     * The number of scan buckets: the keyspace is split into this many fixed parts by a hash of the key, and a key
     * never moves between them, so a scan cursor can simply name the next bucket to visit.
     */
    public static final int SCAN_BUCKETS = Index.BUCKETS;

    /**
     * Visits the live keys of scan bucket {@code bucket} (0 to {@link #SCAN_BUCKETS} - 1): every key present in it
     * for the whole visit, each once. Returns the number of keys examined, expired ones included (the work done).
     */
    public int scanBucket(int bucket, Consumer<byte[]> visitor) {
        long now = System.currentTimeMillis();
        return index.forEachInBucket(bucket, e -> {
            if (!e.isExpired(now)) {
                visitor.accept(e.keyBytes);
            }
        });
    }

    /** What {@link #versionsInBucket} tells of each live key. */
    public interface VersionVisitor {
        void visit(byte[] key, long version, long expireAt, long length);
    }

    /**
     * Visits the live keys of scan bucket {@code bucket} with the cluster version, expiry and length of their value,
     * as {@link #scanBucket} does; returns the number of keys examined.
     */
    public int versionsInBucket(int bucket, VersionVisitor visitor) {
        long now = System.currentTimeMillis();
        return index.forEachInBucket(bucket, e -> {
            if (!e.isExpired(now)) {
                visitor.visit(e.keyBytes, e.version, e.expireAt, e.length);
            }
        });
    }

    /** The cluster version of {@code key}'s value (0 for none), or -1 if there is no such key. */
    public long version(byte[] keyBytes) {
        Entry e = index.get(new Key(keyBytes));
        return e == null || expireIfDue(e) ? -1 : e.version;
    }

    /** What {@link #describeBucket} tells of each live key. */
    public interface KeyVisitor {
        void visit(byte[] key, long length, Residence where);
    }

    /**
     * Visits the live keys of index bucket {@code bucket} (0 .. {@link #SCAN_BUCKETS}-1) with their length and where
     * they are, as of the visit (a snapshot of store events); returns how many.
     */
    public int describeBucket(int bucket, KeyVisitor visitor) {
        long now = System.currentTimeMillis();
        List<Entry> entries = new ArrayList<>();
        index.forEachInBucket(bucket, e -> {
            if (!e.isExpired(now)) {
                entries.add(e);
            }
        });
        int n = 0;
        for (Entry e : entries) {
            Residence where;
            synchronized (e) { // outside the bucket's lock: no lock order to keep with the entry's
                if (!e.state().isLive()) {
                    continue;
                }
                where = e.memory != null ? Residence.MEMORY : Residence.DISK;
            }
            visitor.visit(e.keyBytes, e.length, where);
            n++;
        }
        return n;
    }

    // ---- expiry -------------------------------------------------------------------------------------------------

    private boolean expireIfDue(Entry e) {
        if (e.isExpiredNow()) {
            expire(e);
            return true;
        }
        return false;
    }

    /** Removes {@code e} if it is still the key's version and its deadline (which EXPIRE may move) has passed. */
    private void expire(Entry e) {
        long[] tombstoneSeq = {-1};
        long now = System.currentTimeMillis();
        index.computeIfPresent(e.key(), (k, current) -> {
            if (current != e || !e.isExpired(now)) {
                return current;
            }
            tombstoneSeq[0] = sequence.incrementAndGet(); // under the bin lock, as in remove
            indexBudget.refund(k.bytes.length);
            return null;
        });
        if (tombstoneSeq[0] >= 0) {
            counters.expired.increment();
            retire(e, tombstoneSeq[0], KeyListener.Removal.EXPIRED);
        }
    }

    /** Timer task: expires what the wheel says is due; work is proportional to the keys due, not to all TTL keys. */
    private void expireDue() {
        try {
            expiry.advance(System.currentTimeMillis(), this::expire);
        } catch (RuntimeException ex) {
            log.error("expiry failed", ex);
        }
    }

    // ---- lifecycle hooks and pins ---------------------------------------------------------------------------------

    private void added(Entry e) {
        if (pins.contains(e)) {
            if (bypassesMemory(e.length)) {
                unpin(e.keyBytes); // a value that cannot be in memory cannot be pinned there
            } else {
                pins.resized(e.key(), e.length);
            }
        }
        try {
            listener.added(e.keyBytes, e.length, e.state() == EntryState.DISK ? Residence.DISK : Residence.MEMORY);
        } catch (RuntimeException ex) {
            log.error("key listener failed on a write", ex); // never let it undo the store's own bookkeeping
        }
    }

    /** Tells the listener that {@code e} moved to {@code to}; called after the move, outside locks. */
    void moved(Entry e, Residence to) {
        try {
            listener.moved(e.keyBytes, e.length, to);
        } catch (RuntimeException ex) {
            log.error("key listener failed on a move", ex);
        }
    }

    /**
     * A version left the index for good, at or before sequence number {@code seq}: tells the listener; a pin ends
     * with its key (not with an overwrite).
     */
    void gone(Entry e, KeyListener.Removal why, long seq) {
        expiry.unschedule(e);
        if (why != KeyListener.Removal.REPLACED && !index.containsKey(e.key())) {
            unpin(e.keyBytes);
        }
        try {
            listener.removed(e.keyBytes, e.length, why, seq);
        } catch (RuntimeException ex) {
            log.error("key listener failed on a removal", ex);
        }
    }

    /** The newest sequence number handed out: versions written from now on have higher ones. */
    public long sequence() {
        return sequence.get();
    }

    /** Offers an entry that just arrived in memory to the policy, unless its key is pinned or it is queued already. */
    void admit(Entry e) {
        policyLock.lock();
        try {
            if (!e.isQueued() && !pins.contains(e)) {
                policy.add(e);
            }
        } finally {
            policyLock.unlock();
        }
    }

    /**
     * Pins {@code key} in memory until {@code untilMillis} (0: until unpinned); renewing a pin resets its deadline. A
     * value on disk stays there until it is next read, which promotes it (a pinned key is promoted on its first disk
     * hit). Throws {@link PinBudgetException} if the pinned bytes would pass the budget.
     */
    public PinOutcome pin(byte[] keyBytes, long untilMillis) {
        Key key = new Key(keyBytes);
        Entry e = index.get(key);
        if (e == null || expireIfDue(e)) {
            return PinOutcome.NO_KEY;
        }
        pins.pin(key, e.length, untilMillis);
        Entry now = e;
        for (int i = 0; i < 2 && now != null; i++) { // the version pinned, and one that replaced it meanwhile
            policyLock.lock();
            try {
                if (now.isQueued()) {
                    policy.remove(now);
                }
            } finally {
                policyLock.unlock();
            }
            Entry next = index.get(key);
            if (next == now) {
                break;
            }
            now = next;
        }
        if (now == null) {
            unpin(keyBytes);
            return PinOutcome.NO_KEY;
        }
        if (now != e) {
            pins.resized(key, now.length);
        }
        synchronized (now) {
            return now.memory != null ? PinOutcome.IN_MEMORY : PinOutcome.ON_DISK;
        }
    }

    /** Ends {@code key}'s pin; its value becomes an ordinary candidate for demotion. False if it was not pinned. */
    public boolean unpin(byte[] keyBytes) {
        Key key = new Key(keyBytes);
        if (!pins.unpin(key)) {
            return false;
        }
        Entry e = index.get(key);
        if (e != null) {
            boolean inMemory;
            synchronized (e) {
                inMemory = e.state() == EntryState.MEMORY;
            }
            if (inMemory) {
                admit(e);
            }
        }
        return true;
    }

    long pinCount() {
        return pins.count();
    }

    long pinnedBytes() {
        return pins.bytes();
    }

    boolean pinned(Entry e) {
        return pins.contains(e);
    }

    public boolean isPinned(byte[] keyBytes) {
        return pins.contains(new Key(keyBytes));
    }

    private void endDuePins() {
        try {
            for (Key k : pins.due(System.currentTimeMillis())) {
                unpin(k.bytes);
            }
        } catch (RuntimeException ex) {
            log.error("pin expiry sweep failed", ex);
        }
    }

    /** Whether {@code key}'s value has a disk record: what a crash now would keep of it. */
    public boolean onDisk(byte[] keyBytes) {
        Entry e = index.get(new Key(keyBytes));
        if (e == null || expireIfDue(e)) {
            return false;
        }
        synchronized (e) {
            return e.state().isLive() && e.disk != null;
        }
    }

    /** Where {@code key}'s value is: in memory (possibly also on disk), only on disk, or null if there is no key. */
    public Residence residence(byte[] keyBytes) {
        Entry e = index.get(new Key(keyBytes));
        if (e == null || expireIfDue(e)) {
            return null;
        }
        synchronized (e) {
            if (!e.state().isLive()) {
                return null;
            }
            return e.memory != null ? Residence.MEMORY : Residence.DISK;
        }
    }

    // ---- statistics and lifecycle -------------------------------------------------------------------------------

    public StoreStats stats() {
        return StoreStats.of(this);
    }

    /**
     * Writes every memory-only value to disk, forces the log and frees all memory. Idempotent.
     *
     * @throws ShutdownLossException after closing everything, if some values only in memory could not be written
     *         (disk full, read-only or failing); it names how many keys and bytes were lost, as the ERROR line logged
     *         here does
     */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        timer.shutdownNow();
        directWrites.shutdownNow();
        waiters.failAll("store is closing");
        long start = System.nanoTime();
        for (Key k : pins.keys()) { // pinned values are outside the policy, which the shutdown flush drains
            unpin(k.bytes);
        }
        long evictedBefore = counters.evictions.sum();
        DiskWriter.ShutdownStats flushed = writer.shutdown();
        long evicted = counters.evictions.sum() - evictedBefore;
        long[] lost = memoryOnly();
        IOException closeFailure = null;
        boolean directoryOurs = directoryStillOurs(); // asked while the tier still holds the directory's lock
        try {
            disk.close();
        } catch (IOException e) {
            closeFailure = e;
        }
        memory.close();
        log.info("store closed: wrote {} memory-only values ({} bytes) to disk in {} ms; {} keys on disk; {} keys of "
                        + "older regions evicted to make room", flushed.values(), flushed.bytes(),
                (System.nanoTime() - start) / 1_000_000, index.size() - lost[0], evicted);
        IOException cause = flushed.failure() != null ? flushed.failure() : closeFailure;
        if (lost[0] == 0 && closeFailure == null && directoryOurs) {
            crashAccount.stoppedCleanly();
        }
        if (lost[0] > 0 || closeFailure != null) {
            ShutdownLossException loss = new ShutdownLossException(lost[0], lost[1], cause);
            log.error(loss.getMessage());
            throw loss;
        }
    }

    /**
     * Stops as a kill -9 would leave the store: records the disk writer has written stay in their files (the page
     * cache keeps them), values only in memory and records still in its write buffer are lost, nothing is forced, and
     * the data directory is unlocked. For in-JVM fault tests (a MiniCluster's kill); a killed process does this by
     * dying. Idempotent, and a no-op after {@link #close}.
     */
    public void crash() {
        if (closed) {
            return;
        }
        closed = true;
        timer.shutdownNow();
        directWrites.shutdownNow();
        waiters.failAll("store crashed");
        writer.halt();
        disk.abandon();
        memory.close();
        log.warn("store crashed (a fault test): {} keys were in the index", index.size());
    }

    /** Keys, and their value bytes, held only in memory (after the shutdown flush: those it could not write). */
    private long[] memoryOnly() {
        long[] keysAndBytes = new long[2];
        index.forEach(e -> {
            synchronized (e) {
                if (e.state().isLive() && e.memory != null && e.disk == null) {
                    keysAndBytes[0]++;
                    keysAndBytes[1] += e.length;
                }
            }
        });
        return keysAndBytes;
    }

    /** Heap the key index is charged now ({@link IndexBudget}), bytes. */
    public long indexBytes() {
        return indexBudget.used();
    }

    /** The index's heap budget (--index-memory), bytes. */
    public long indexBudget() {
        return indexBudget.budget();
    }

    long waitingBytes() {
        return waiters.waitingBytes();
    }

}
