package io.kvtier.store;

import io.kvtier.store.disk.DiskLocation;
import io.kvtier.store.disk.PendingRecord;
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
 * max(1/8 of the budget capped at 256 MiB, what waiting writers need).
 */
final class DiskWriter implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(DiskWriter.class);

    /** What the shutdown flush wrote. */
    record ShutdownStats(long values, long bytes) {
    }

    private record Job(PendingRecord record, Runnable task, CompletableFuture<Void> done) {
    }

    private final TieredStore store;
    private final LinkedBlockingQueue<Job> jobs = new LinkedBlockingQueue<>();
    private final AtomicBoolean wakePending = new AtomicBoolean();
    private final Map<Region, List<Entry>> residents = new HashMap<>(); // writer thread (and recovery) only
    private final Thread thread;
    private volatile boolean stopping;
    private ShutdownStats shutdownStats = new ShutdownStats(0, 0);

    DiskWriter(TieredStore store) {
        this.store = store;
        this.thread = TieredStore.daemon(this, "kvtier-disk-writer");
    }

    void start() {
        thread.start();
    }

    /** Records that {@code e}'s value lives in {@code loc}'s region, so evicting the region can find it. */
    void track(Entry e, DiskLocation loc) {
        residents.computeIfAbsent(loc.region(), r -> new ArrayList<>()).add(e);
    }

    /** Appends {@code record} in order with all other disk writes; completes once it is written. */
    CompletableFuture<Void> journal(PendingRecord record) {
        return enqueue(new Job(record, null, new CompletableFuture<>()));
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
        return enqueue(new Job(null, task, new CompletableFuture<>()));
    }

    private CompletableFuture<Void> enqueue(Job job) {
        if (stopping) {
            job.done().completeExceptionally(new IllegalStateException("store is closing"));
        } else {
            jobs.add(job);
        }
        return job.done();
    }

    void wake() {
        if (wakePending.compareAndSet(false, true)) {
            jobs.add(new Job(null, null, null));
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
                while (!stopping && freeBytes() < lowWatermark() && demoteBatch(lowWatermark() * 3 / 2 - freeBytes()) > 0) {
                    runJobs(drain()); // keep tombstones flowing while demoting a large backlog
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (IOException | RuntimeException e) {
                log.error("disk writer: {}; retrying in 1 s", e.toString(), e);
                sleepQuietly();
            }
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
                    store.disk.append(job.record());
                    written.add(job);
                } else if (job.task() != null) {
                    store.disk.flush();
                    job.task().run();
                    job.done().complete(null);
                }
            } catch (IOException | RuntimeException e) {
                log.error("disk write failed: {}", e.toString());
                job.done().completeExceptionally(e);
            }
        }
        try {
            store.disk.flush();
            written.forEach(j -> j.done().complete(null));
        } catch (IOException e) {
            log.error("disk flush failed: {}", e.toString());
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
        List<Entry> dirty = new ArrayList<>();
        List<MemoryValue> pinned = new ArrayList<>();
        List<MemoryValue> dropped = new ArrayList<>();
        long bytes = 0;
        long freed = 0;
        int moved = 0;
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
        store.counters.demotions.add(moved);
        return moved + writeDemoted(dirty, pinned);
    }

    private int writeDemoted(List<Entry> dirty, List<MemoryValue> pinned) throws IOException {
        DiskLocation[] locations = new DiskLocation[dirty.size()];
        try {
            for (int i = 0; i < dirty.size(); i++) {
                Entry e = dirty.get(i);
                MemoryValue mem = pinned.get(i);
                locations[i] = store.disk.append(PendingRecord.value(e.key.bytes, e.seq, e.expireAt, mem.buffers(),
                        mem.length()));
            }
            store.disk.flush();
        } catch (IOException | RuntimeException ex) {
            undoDemotion(dirty);
            pinned.forEach(MemoryValue::release);
            throw ex;
        }
        int moved = 0;
        List<Entry> bounced = new ArrayList<>();
        for (int i = 0; i < dirty.size(); i++) {
            Entry e = dirty.get(i);
            if (locations[i].region().isEvicted()) {
                // A later, larger record of this batch evicted the region this one went to (only this thread
                // evicts): the record is gone, so the entry stays in memory rather than point at a deleted file.
                bounced.add(e);
                pinned.get(i).release();
                continue;
            }
            MemoryValue release = null;
            boolean kept = false;
            synchronized (e) {
                if (e.state() == EntryState.DEMOTING) {
                    e.disk = locations[i];
                    if (store.pinned(e.key)) { // pinned while being written: it stays in memory, now clean
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
            if (kept && !store.pinned(e.key)) {
                store.admit(e); // unpinned meanwhile: back to being a candidate like any value in memory
            }
            if (release != null) {
                release.release();
                store.counters.demotedBytes.add(e.length);
            }
            pinned.get(i).release();
        }
        undoDemotion(bounced);
        store.counters.demotions.add(moved);
        return moved;
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

    /** Stops the thread after writing every memory-only value to disk and forcing the log. */
    ShutdownStats shutdown() throws IOException {
        CompletableFuture<Void> done = submit(() -> {
            long before = store.counters.demotedBytes.sum();
            long values = 0;
            try {
                int n;
                while ((n = demoteBatch(Long.MAX_VALUE)) > 0) {
                    values += n;
                }
                store.disk.force();
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            shutdownStats = new ShutdownStats(values, store.counters.demotedBytes.sum() - before);
            stopping = true;
        });
        try {
            done.get(10, TimeUnit.MINUTES);
        } catch (Exception e) {
            stopping = true;
            throw new IOException("shutdown flush failed", e);
        }
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        jobs.forEach(j -> {
            if (j.done() != null) {
                j.done().completeExceptionally(new IllegalStateException("store is closing"));
            }
        });
        return shutdownStats;
    }

    private static void sleepQuietly() {
        try {
            Thread.sleep(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
