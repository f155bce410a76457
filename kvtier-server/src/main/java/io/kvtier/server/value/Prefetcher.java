package io.kvtier.server.value;

import io.kvtier.store.TieredStore;
import io.kvtier.store.TieredStore.Prefetch;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * KVC.PREFETCH's background work: keys whose values should be in memory before their reads arrive (a router that has
 * just sent a request to an engine knows which chunks its LMCache will load). A bounded queue, one low-priority
 * thread, one disk read at a time, into memory free now ({@link TieredStore#prefetch}): a full queue drops new keys,
 * a missing key costs a lookup, memory without room now (or with writers waiting) refuses the prefetch. The staging
 * buffer is one direct buffer of the largest value prefetched so far (at most {@link #MAX_BYTES} plus a record's
 * header and key), freed whenever the queue runs empty.
 */
public final class Prefetcher implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Prefetcher.class);
    /** Keys waiting at most. */
    public static final int QUEUE = 4_096;
    /** Largest value prefetched: LMCache's chunks are 1-64 MiB. */
    public static final long MAX_BYTES = 64L << 20;

    private final TieredStore store;
    private final ArrayBlockingQueue<byte[]> queue = new ArrayBlockingQueue<>(QUEUE);
    private final Thread thread;
    private volatile boolean closed;
    private ByteBuffer staging; // the prefetch thread's only
    final LongAdder requested = new LongAdder();
    final LongAdder dropped = new LongAdder();
    final LongAdder notPrefetched = new LongAdder();

    public Prefetcher(TieredStore store) {
        this.store = store;
        this.thread = Thread.ofPlatform().name("kvtier-prefetch").daemon().priority(Thread.MIN_PRIORITY)
                .unstarted(this::run);
        thread.start();
    }

    /** Queues {@code keys}; returns how many were taken (the rest are dropped: the queue is full). Never blocks. */
    public int offer(List<byte[]> keys) {
        int taken = 0;
        for (byte[] key : keys) {
            if (queue.offer(key)) {
                taken++;
            }
        }
        requested.add(keys.size());
        dropped.add(keys.size() - taken);
        return taken;
    }

    /** Keys asked for, keys dropped because the queue was full, keys not prefetched (missing, resident, no room). */
    public long requested() {
        return requested.sum();
    }

    public long dropped() {
        return dropped.sum();
    }

    public long notPrefetched() {
        return notPrefetched.sum();
    }

    /** Keys waiting now. */
    public int queued() {
        return queue.size();
    }

    private void run() {
        while (!closed) {
            byte[] key;
            try {
                key = queue.poll(1, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                return;
            }
            if (key == null) {
                staging = null; // idle: give the staging buffer back
                continue;
            }
            try {
                if (store.prefetch(key, MAX_BYTES, this::staging) != Prefetch.PROMOTED) {
                    notPrefetched.increment();
                }
            } catch (Exception e) {
                notPrefetched.increment();
                log.debug("prefetch of a key of {} bytes failed: {}", key.length, e.toString());
            }
        }
    }

    private ByteBuffer staging(int bytes) {
        if (staging == null || staging.capacity() < bytes) {
            staging = ByteBuffer.allocateDirect(bytes);
        }
        return staging.clear();
    }

    @Override
    public void close() throws InterruptedException {
        closed = true;
        thread.interrupt();
        thread.join(5_000);
    }
}
