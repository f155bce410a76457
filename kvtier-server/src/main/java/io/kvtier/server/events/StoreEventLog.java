package io.kvtier.server.events;

import io.kvtier.events.EventPublisher;
import io.kvtier.events.StoreEvent;
import io.kvtier.events.StoreEventBatch;
import io.kvtier.events.StoreEventCodec;
import io.kvtier.kvcache.key.LmcacheKey;
import io.kvtier.store.KeyListener;
import io.kvtier.store.Residence;
import io.kvtier.store.TieredStore;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes what happens to the node's KV-cache chunks (LMCache keys: whole chunks and kv_bytes halves) as store events (docs/routing.md, "Store events"): stored (with its tier),
 * moved between memory and disk, deleted, expired, evicted. The store's threads only put an event on a bounded queue
 * (no I/O, no blocking: a full queue drops the event and marks the stream lossy); one thread of its own batches them
 * (every {@link #LINGER_MS} ms, at most {@link #MAX_BATCH} events each) and sends them with vLLM's framing. A loss
 * uses up a
 * sequence number, so that subscribers see a gap no replay fills and ask for a snapshot, which the publisher's thread
 * builds from the store's index, bucket by bucket. An overwrite is one STORED (the old version's removal is implied).
 */
public final class StoreEventLog implements KeyListener, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(StoreEventLog.class);
    /** Events per batch, and per snapshot part. */
    static final int MAX_BATCH = 1024;
    static final long LINGER_MS = 5;
    static final int QUEUE = 65_536;
    /** Batches kept for replay: at 1024 events each, the last 4 M events. */
    static final int REPLAY_BATCHES = 4_096;

    private volatile String node;
    private final long incarnation = new SecureRandom().nextLong() & Long.MAX_VALUE;
    private final ArrayBlockingQueue<StoreEvent> queue = new ArrayBlockingQueue<>(QUEUE);
    private final AtomicBoolean lost = new AtomicBoolean();
    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong published = new AtomicLong();
    private volatile boolean started;
    private volatile boolean closing;
    private volatile TieredStore store;
    private volatile EventPublisher publisher;
    private Thread thread;

    /**
     * Binds the PUB socket on {@code host:port} and the replay/snapshot socket on the port above, and starts
     * publishing what happens to {@code store} from now on (what it held before is in every snapshot); {@code node}
     * is how subscribers name this node (its advertised host:port, or its cluster id); {@code password} (null: none)
     * is what subscribers must present (ZMTP PLAIN), the node's {@code --requirepass}.
     */
    public void start(TieredStore store, String node, String host, int port, String password) {
        this.store = store;
        this.node = node;
        this.publisher = new EventPublisher("tcp://" + host + ":" + port, "tcp://" + host + ":" + (port + 1),
                "kvtier", true, REPLAY_BATCHES, this::snapshot, password);
        this.thread = Thread.ofPlatform().daemon().name("kv-store-events").start(this::run);
        started = true;
        log.info("store events on tcp://{}:{} (replay and snapshots on {}{}), node {}, incarnation {}", host, port,
                port + 1, password == null ? "" : "; both ask for the password", node, incarnation);
    }

    public long incarnation() {
        return incarnation;
    }

    /** Events dropped because the queue was full (each loss makes subscribers take a snapshot). */
    public long dropped() {
        return dropped.get();
    }

    public long published() {
        return published.get();
    }

    /** Replay and snapshot peers whose answers were cut short because they took none (EventPublisher's bound). */
    public long replayPeersDropped() {
        EventPublisher p = publisher;
        return p == null ? 0 : p.peersDropped();
    }

    /** Replay and snapshot requests left unserved from peers cut off lately. */
    public long replayRequestsIgnored() {
        EventPublisher p = publisher;
        return p == null ? 0 : p.requestsIgnored();
    }

    private void offer(StoreEvent.Kind kind, byte[] key, long length, StoreEvent.Tier tier) {
        if (!started || !LmcacheKey.holdsChunkData(key)) {
            return; // not publishing yet (recovery: subscribers start from a snapshot anyway), or not a chunk
        }
        if (!queue.offer(new StoreEvent(kind, key, length, tier))) {
            dropped.incrementAndGet();
            lost.set(true);
        }
    }

    private static StoreEvent.Tier tier(Residence where) {
        return where == Residence.MEMORY ? StoreEvent.Tier.MEMORY : StoreEvent.Tier.DISK;
    }

    @Override
    public void added(byte[] key, long length) {
        offer(StoreEvent.Kind.STORED, key, length, StoreEvent.Tier.MEMORY);
    }

    @Override
    public void added(byte[] key, long length, Residence where) {
        offer(StoreEvent.Kind.STORED, key, length, tier(where));
    }

    @Override
    public void moved(byte[] key, long length, Residence to) {
        offer(StoreEvent.Kind.MOVED, key, length, tier(to));
    }

    @Override
    public void removed(byte[] key, long length, Removal why, long seq) {
        switch (why) {
            case REPLACED -> {
            } // the new version's STORED says it
            case DELETED -> offer(StoreEvent.Kind.DELETED, key, length, null);
            case EXPIRED -> offer(StoreEvent.Kind.EXPIRED, key, length, null);
            case LOST -> offer(StoreEvent.Kind.EVICTED, key, length, null);
        }
    }

    /**
     * Every {@link #LINGER_MS} ms, drains the queue into batches of at most {@link #MAX_BATCH}. The thread never waits
     * on the queue itself: a waiting consumer would be woken by every event (a context switch per SET).
     */
    private void run() {
        List<StoreEvent> batch = new ArrayList<>(MAX_BATCH);
        while (!closing) {
            try {
                Thread.sleep(LINGER_MS);
                flushLoss();
                while (queue.drainTo(batch, MAX_BATCH) > 0) {
                    publisher.publish(StoreEventCodec.encode(new StoreEventBatch(node, incarnation,
                            System.currentTimeMillis() / 1000.0, false, List.copyOf(batch))));
                    published.addAndGet(batch.size());
                    batch.clear();
                }
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                log.error("publishing store events failed; subscribers will resync", e);
                batch.clear();
                publisher.skip();
            }
        }
    }

    /** Events were dropped since the last batch: use up a seq so that subscribers see a loss. */
    private void flushLoss() {
        if (lost.getAndSet(false)) {
            publisher.skip();
            log.warn("store events dropped (queue of {} full; {} so far): subscribers will take a snapshot", QUEUE,
                    dropped.get());
        }
    }

    /** Every live key with its length and tier, {@link #MAX_BATCH} per part; at least one part (maybe empty). */
    private void snapshot(Consumer<byte[]> part) {
        List<StoreEvent> events = new ArrayList<>(MAX_BATCH);
        int[] parts = {0};
        Runnable flush = () -> {
            part.accept(StoreEventCodec.encode(new StoreEventBatch(node, incarnation,
                    System.currentTimeMillis() / 1000.0, true, List.copyOf(events))));
            events.clear();
            parts[0]++;
        };
        for (int b = 0; b < TieredStore.SCAN_BUCKETS && !closing; b++) {
            store.describeBucket(b, (key, length, where) -> {
                if (!LmcacheKey.holdsChunkData(key)) {
                    return;
                }
                events.add(new StoreEvent(StoreEvent.Kind.STORED, key, length, tier(where)));
                if (events.size() == MAX_BATCH) {
                    flush.run();
                }
            });
        }
        if (!events.isEmpty() || parts[0] == 0) {
            flush.run();
        }
    }

    @Override
    public void close() {
        closing = true;
        started = false;
        if (thread != null) {
            thread.interrupt();
            try {
                thread.join(2_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (publisher != null) {
            publisher.close();
        }
    }
}
