package io.kvtier.store;

import io.kvtier.store.disk.DiskLocation;
import io.kvtier.store.disk.DiskTier;
import io.kvtier.store.disk.PendingRecord;
import io.kvtier.store.disk.RecordFormat;
import io.kvtier.store.disk.Region;
import io.kvtier.store.memory.MemoryValue;
import io.kvtier.store.policy.PolicyNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one thread that writes the disk tier: journal records (tombstones, expiry changes), demotion batches,
 * region eviction and FLUSHALL, in submission order. It demotes whenever free memory is below the watermark:
 * max(1/8 of the budget capped at 256 MiB, what waiting writers need). A failing disk (no space, read-only, I/O
 * error, data directory gone) puts it in the fault state, logged once when it starts and once when it ends; while
 * in it, writers that need memory fail at once (TieredStore) and demotion is retried every second.
 */
final class DiskWriter implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(DiskWriter.class);

    /** What the shutdown flush wrote, and why it stopped early (null if it wrote everything). */
    record ShutdownStats(long values, long bytes, IOException failure) {
    }

    /** {@code owner}: the entry whose version the record ends or changes (its directory takes the record), or null. */
    private record Job(PendingRecord record, Entry owner, Runnable task, CompletableFuture<Void> done) {
    }

    private final TieredStore store;
    private final DiskAdmission admission; // writer thread only
    private final LinkedBlockingQueue<Job> jobs = new LinkedBlockingQueue<>();
    private final AtomicBoolean wakePending = new AtomicBoolean();
    private final Map<Region, List<Entry>> residents = new HashMap<>(); // writer thread (and recovery) only
    private final Thread thread;
    private volatile boolean stopping;
    private volatile String fault;          // why the disk tier cannot take writes now; null when it can
    private long lastDirectoryCheck;        // writer thread only
    private long retryAt;                   // writer thread only: when to try demoting again while in the fault state
    private ShutdownStats shutdownStats = new ShutdownStats(0, 0, null);

    DiskWriter(TieredStore store) {
        this.store = store;
        this.admission = new DiskAdmission(store.options.diskWriteLimit());
        if (admission.limited()) {
            log.info("disk write limit {} bytes/s: values of 64 KiB or more that leave memory unread are dropped "
                    + "while demotions are over it (a value dropped once is written the next time)",
                    admission.bytesPerSecond());
        }
        this.thread = TieredStore.daemon(this, "kvtier-disk-writer");
    }

    void start() {
        thread.start();
    }

    /** Records that {@code e}'s value lives in {@code loc}'s region, so evicting the region can find it. */
    void track(Entry e, DiskLocation loc) {
        residents.computeIfAbsent(loc.region(), r -> new ArrayList<>()).add(e);
    }

    /**
     * Appends {@code record} in order with all other disk writes; completes once it is written. It ends or changes the
     * version {@code owner} holds: it goes to the directory of that version's record, if it has one by then.
     */
    CompletableFuture<Void> journal(PendingRecord record, Entry owner) {
        return enqueue(new Job(record, owner, null, new CompletableFuture<>()));
    }

    /** Runs {@code task} on the writer thread, in order with all disk writes, and completes with its result. */
    <T> CompletableFuture<T> call(java.util.function.Supplier<T> task) {
        CompletableFuture<T> result = new CompletableFuture<>();
        submit(() -> {
            try {
                result.complete(task.get());
            } catch (RuntimeException e) {
                result.completeExceptionally(e);
            }
        }).whenComplete((v, e) -> {
            if (e != null) {
                result.completeExceptionally(e);
            }
        });
        return result;
    }

    /** Runs {@code task} on the writer thread, in order with all disk writes. */
    CompletableFuture<Void> submit(Runnable task) {
        return enqueue(new Job(null, null, task, new CompletableFuture<>()));
    }

    private CompletableFuture<Void> enqueue(Job job) {
        if (stopping) {
            job.done().completeExceptionally(new IllegalStateException("store is closing"));
        } else {
            jobs.add(job);
        }
        return job.done();
    }

    /** Why the disk tier cannot take writes now (no space, read-only, I/O error, directory gone), or null. */
    String fault() {
        return fault;
    }

    /** Enters (or stays in) the fault state; logs only on entering it, without a stack trace. */
    private void failed(IOException e) {
        String why = e.toString();
        boolean entering = fault == null;
        fault = why;
        if (entering) {
            log.error("disk tier cannot take writes: {}; values stay in memory, writes that need more memory fail at "
                    + "once, retrying every second", why);
            store.diskFaulted(why);
        }
    }

    private void succeeded() {
        if (fault != null) {
            fault = null;
            log.info("disk tier takes writes again");
        }
    }

    void wake() {
        if (wakePending.compareAndSet(false, true)) {
            jobs.add(new Job(null, null, null, null));
        }
    }

    void wakeIfPressured() {
        if (freeBytes() < lowWatermark()) {
            wake();
        }
    }

    private long freeBytes() {
        return store.memory.budget() - store.memory.usedBytes();
    }

    private long lowWatermark() {
        return TieringRules.lowWatermark(store.memory.budget(), store.waitingBytes());
    }

    @Override
    public void run() {
        while (!stopping) {
            try {
                Job first = jobs.poll(100, TimeUnit.MILLISECONDS);
                wakePending.set(false);
                if (first != null) {
                    List<Job> batch = new ArrayList<>();
                    batch.add(first);
                    jobs.drainTo(batch);
                    runJobs(batch);
                }
                checkDirectory();
                if (fault != null && System.nanoTime() < retryAt) {
                    continue; // journal jobs still run (and fail) at once; demotion is retried once a second
                }
                while (!stopping && freeBytes() < lowWatermark() && demoteBatch(lowWatermark() * 3 / 2 - freeBytes()) > 0) {
                    succeeded();
                    runJobs(drain()); // keep tombstones flowing while demoting a large backlog
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (IOException e) {
                if (!madeRoom(e)) {
                    failed(e);
                    retryAt = System.nanoTime() + 1_000_000_000L;
                }
            } catch (RuntimeException e) {
                log.error("disk writer: {}; retrying in 1 s", e.toString(), e);
                sleepQuietly();
            }
        }
    }

    /** On "no space left on device", evicts the oldest region so that a retry can fit; false if that cannot help. */
    private boolean madeRoom(IOException e) {
        try {
            return DiskTier.isNoSpace(e) && store.disk.evictOldestForSpace();
        } catch (IOException evictFailed) {
            return false;
        }
    }

    /** Once a second: is the data directory still ours? (DiskTier logs it once; writes fail from then on.) */
    private void checkDirectory() throws IOException {
        long now = System.nanoTime();
        if (now - lastDirectoryCheck > 1_000_000_000L) {
            lastDirectoryCheck = now;
            store.disk.checkDirectory();
        }
    }

    private List<Job> drain() {
        List<Job> batch = new ArrayList<>();
        jobs.drainTo(batch);
        return batch;
    }

    private void runJobs(List<Job> batch) {
        List<Job> written = new ArrayList<>();
        for (Job job : batch) {
            try {
                if (job.record() != null) {
                    store.disk.append(job.record(), regionOf(job.owner()));
                    written.add(job);
                } else if (job.task() != null) {
                    store.disk.flush();
                    job.task().run();
                    job.done().complete(null);
                }
            } catch (IOException e) {
                failed(e);
                job.done().completeExceptionally(e);
            } catch (RuntimeException e) {
                log.error("disk write failed: {}", e.toString());
                job.done().completeExceptionally(e);
            }
        }
        try {
            store.disk.flush();
            if (!written.isEmpty()) {
                succeeded();
            }
            written.forEach(j -> j.done().complete(null));
        } catch (IOException e) {
            failed(e);
            written.forEach(j -> j.done().completeExceptionally(e));
        }
    }

    /**
     * Demotes victims until they free about {@code wanted} bytes of memory, or one batch is full: clean ones just drop
     * their memory copy, dirty ones are written first. Returns how many entries left memory. Stopping at
     * {@code wanted} matters: without it every dip below the watermark would drain the policy's main queue too,
     * demoting the hot set along with the cold scan the policy is there to absorb.
     */
    private int demoteBatch(long wanted) throws IOException {
        return demoteBatch(wanted, true);
    }

    /**
     * As {@link #demoteBatch(long)}; with {@code admit} false (the shutdown flush) every dirty victim is written,
     * whatever the disk write limit's {@link DiskAdmission} would say.
     */
    private int demoteBatch(long wanted, boolean admit) throws IOException {
        List<Entry> dirty = new ArrayList<>();
        List<Entry> refused = new ArrayList<>();
        long now = System.nanoTime();
        List<MemoryValue> pinned = new ArrayList<>();
        List<MemoryValue> dropped = new ArrayList<>();
        long bytes = 0;
        long freed = 0;
        int moved = 0;
        List<Entry> cleanDemoted = new ArrayList<>();
        store.policyLock.lock();
        try {
            while (freed < wanted && bytes < TieringRules.DEMOTION_BATCH_BYTES
                    && dirty.size() < TieringRules.DEMOTION_BATCH_ENTRIES) {
                PolicyNode node = store.policy.nextVictim();
                if (node == null) {
                    break;
                }
                Entry e = (Entry) node;
                synchronized (e) {
                    if (e.state() != EntryState.MEMORY) {
                        continue;
                    }
                    freed += e.memory.footprint();
                    if (e.disk != null) {
                        dropped.add(e.memory);
                        e.memory = null;
                        e.moveTo(EntryState.DISK, store.counters);
                        cleanDemoted.add(e);
                        moved++;
                    } else if (admit && !admission.admits(e.fingerprint(), e.length, e.read != 0, now)) {
                        dropped.add(e.memory); // not written: lost, as an evicted region's values are
                        e.memory = null;
                        e.moveTo(EntryState.EVICTED, store.counters);
                        refused.add(e);
                        moved++;
                    } else if (e.memory.tryRetain()) {
                        pinned.add(e.memory);
                        e.moveTo(EntryState.DEMOTING, store.counters);
                        dirty.add(e);
                        bytes += e.length;
                    }
                }
            }
        } finally {
            store.policyLock.unlock();
        }
        dropped.forEach(MemoryValue::release);
        cleanDemoted.forEach(e -> store.moved(e, Residence.DISK));
        for (Entry e : refused) {
            store.unindex(e);
            store.counters.admissionDropped.increment();
            store.counters.admissionDroppedBytes.add(e.length);
            store.counters.evictions.increment();
            store.counters.evictedBytes.add(e.length);
            store.gone(e, KeyListener.Removal.LOST, store.sequence());
        }
        store.counters.demotions.add(moved - refused.size());
        return moved + writeDemoted(dirty, pinned);
    }

    /**
     * Writes the batch; the records written before a failure (disk full, I/O error) still count, so that the values
     * left only in memory are exactly those whose record is not on disk. Rethrows the failure afterwards.
     */
    private int writeDemoted(List<Entry> dirty, List<MemoryValue> pinned) throws IOException {
        DiskLocation[] locations = new DiskLocation[dirty.size()];
        Exception failure = null;
        try {
            for (int i = 0; i < dirty.size(); i++) {
                Entry e = dirty.get(i);
                MemoryValue mem = pinned.get(i);
                locations[i] = store.disk.append(PendingRecord.value(e.keyBytes, e.seq, e.expireAt, mem.buffers(),
                        mem.length(), e.version));
            }
        } catch (IOException | RuntimeException ex) {
            failure = ex;
        }
        try {
            store.disk.flush();
        } catch (IOException ex) {
            failure = failure == null ? ex : failure; // the records cut back by the failed flush fail below
        }
        // Entries whose record is not on disk go back to memory first, before any of the batch is seen on disk: not
        // written (a failure), or a later, larger record of this batch evicted the region it went to (only this
        // thread evicts). They stay in memory rather than point at nothing.
        List<Entry> bounced = new ArrayList<>();
        for (int i = 0; i < dirty.size(); i++) {
            if (!onDisk(locations[i])) {
                bounced.add(dirty.get(i));
            }
        }
        undoDemotion(bounced);
        int moved = 0;
        for (int i = 0; i < dirty.size(); i++) {
            Entry e = dirty.get(i);
            if (!onDisk(locations[i])) {
                pinned.get(i).release();
                continue;
            }
            MemoryValue release = null;
            boolean kept = false;
            synchronized (e) {
                // Also when deleted or replaced meanwhile: its tombstone, queued then, goes where this record is.
                e.disk = locations[i];
                if (e.state() == EntryState.DEMOTING) {
                    if (store.pinned(e)) { // pinned while being written: it stays in memory, now clean
                        e.moveTo(EntryState.MEMORY, store.counters);
                        kept = true;
                    } else {
                        release = e.memory;
                        e.memory = null;
                        e.moveTo(EntryState.DISK, store.counters);
                        moved++;
                    }
                }
            }
            track(e, locations[i]);
            if (kept && !store.pinned(e)) {
                store.admit(e); // unpinned meanwhile: back to being a candidate like any value in memory
            }
            if (release != null) {
                release.release();
                store.counters.demotedBytes.add(e.length);
                store.moved(e, Residence.DISK);
            }
            pinned.get(i).release();
        }
        store.counters.demotions.add(moved);
        if (failure instanceof IOException io) {
            throw io;
        } else if (failure != null) {
            throw (RuntimeException) failure;
        }
        return moved;
    }

    /** The region of {@code e}'s record on disk, or null (none, or no entry). */
    private static Region regionOf(Entry e) {
        if (e == null) {
            return null;
        }
        synchronized (e) {
            return e.disk == null ? null : e.disk.region();
        }
    }

    /** Whether the record at {@code loc} (null: never appended) is in its region's file, which is not evicted. */
    private static boolean onDisk(DiskLocation loc) {
        return loc != null && !loc.region().isEvicted()
                && loc.offset() + loc.recordLength() + RecordFormat.TRAILER_SIZE <= loc.region().size();
    }

    private void undoDemotion(List<Entry> dirty) {
        for (Entry e : dirty) {
            boolean back;
            synchronized (e) {
                back = e.state() == EntryState.DEMOTING;
                if (back) {
                    e.moveTo(EntryState.MEMORY, store.counters);
                }
            }
            if (back) {
                store.admit(e);
            }
        }
    }

    /** Called by the disk tier (on this thread) before it deletes {@code region}: its residents lose their copy. */
    void onRegionEvicted(Region region) {
        List<Entry> entries = residents.remove(region);
        if (entries == null) {
            return;
        }
        for (Entry e : entries) {
            boolean lost;
            synchronized (e) {
                if (e.disk == null || e.disk.region() != region) {
                    continue;
                }
                e.disk = null;
                lost = e.state() == EntryState.DISK;
                if (lost) {
                    e.moveTo(EntryState.EVICTED, store.counters);
                }
            }
            if (lost) {
                store.unindex(e);
                store.counters.evictions.increment();
                store.counters.evictedBytes.add(e.length);
                store.gone(e, KeyListener.Removal.LOST, store.sequence());
            }
        }
    }

    /** FLUSHALL: forgets every region (their entries were already retired) and deletes the files. */
    void dropAllRegions() {
        try {
            store.disk.deleteAll();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        residents.clear();
    }

    /**
     * Stops the thread after writing every memory-only value to disk and forcing the log. What it writes never
     * evicts what it wrote before (DiskTier#keepNewRegions); older regions are evicted for it as for any demotion.
     * If the disk cannot take everything, it stops at the first failure and says why: the values still only in
     * memory are then lost, and the caller reports them.
     */
    ShutdownStats shutdown() throws IOException {
        Runnable flush = () -> {
            long before = store.counters.demotedBytes.sum();
            long values = 0;
            IOException failure = null;
            try {
                store.disk.keepNewRegions();
            } catch (IOException e) {
                failure = e;
            }
            while (failure == null) {
                try {
                    int n = demoteBatch(Long.MAX_VALUE, false);
                    if (n == 0) {
                        break;
                    }
                    values += n;
                } catch (IOException e) {
                    if (!madeRoom(e)) {
                        failure = e;
                        break;
                    }
                }
            }
            try {
                store.disk.force();
            } catch (IOException e) {
                failure = failure == null ? e : failure;
            }
            shutdownStats = new ShutdownStats(values, store.counters.demotedBytes.sum() - before, failure);
            stopping = true;
        };
        CompletableFuture<Void> done = submit(flush);
        try {
            awaitFlush(done, flush);
        } catch (Exception e) {
            stopping = true;
            throw new IOException("shutdown flush failed", e);
        }
        joinAndFailQueued("store is closing");
        return shutdownStats;
    }

    /**
     * Stops the thread as a killed process would stop it: after the job it is running, without writing what is only in
     * memory and without forcing the log; queued jobs fail. For in-JVM fault tests ({@link TieredStore#crash}).
     */
    void halt() {
        stopping = true;
        thread.interrupt();
        joinAndFailQueued("store crashed");
    }

    /** Waits (at most 10 s) for the writer thread to end, then fails the jobs still queued with {@code why}. */
    private void joinAndFailQueued(String why) {
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        jobs.forEach(j -> {
            if (j.done() != null) {
                j.done().completeExceptionally(new IllegalStateException(why));
            }
        });
    }

    /**
     * Waits (at most 10 minutes) for the shutdown flush. If the writer thread is gone (an Error killed it: the process
     * is stopping because of that very Error), the calling thread takes its place and runs what is queued and the flush
     * (again, if the writer died in it), so that a graceful stop still writes what it can instead of waiting for a thread that will never run.
     */
    private void awaitFlush(CompletableFuture<Void> done, Runnable flush) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
        while (!done.isDone()) {
            if (!thread.isAlive()) {
                log.warn("the disk writer thread has died: the shutdown flush runs on {}",
                        Thread.currentThread().getName());
                List<Job> orphans = new ArrayList<>();
                jobs.drainTo(orphans);
                runJobs(orphans);
                if (!done.isDone()) { // the writer died while running the flush itself
                    flush.run();
                    done.complete(null);
                }
                break;
            }
            if (System.nanoTime() > deadline) {
                throw new java.util.concurrent.TimeoutException("the shutdown flush did not end within 10 minutes");
            }
            try {
                done.get(100, TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.TimeoutException stillRunning) {
                // check on the writer thread again
            }
        }
        done.get();
    }

    private static void sleepQuietly() {
        try {
            Thread.sleep(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
