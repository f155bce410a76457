package io.kvtier.bench.workload;

import io.kvtier.bench.load.Lane;
import io.kvtier.bench.load.Outcome;
import io.kvtier.bench.load.Task;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One chat request as LMCache's RedisConnector issues it (lmcache/v1/storage_backend/connector/redis_connector.py):
 * <ol>
 * <li>lookup: {@code EXISTS <chunk><probe suffix>} for the chunks in order, one at a time, until the first 0;</li>
 * <li>retrieve, for every chunk found: {@code GET <chunk>metadata}, then {@code GET <chunk>kv_bytes};</li>
 * <li>store, for every chunk not found: {@code SET <chunk>kv_bytes}, then (if that succeeded)
 * {@code SET <chunk>metadata}.</li>
 * </ol>
 * Chunks of steps 2 and 3 run concurrently ({@value #PARALLEL_CHUNKS} at most, where LMCache gathers them all
 * under a 150-connection limit: the bound keeps a verifying run's memory at a few chunks per lane). The
 * {@code request} row records the whole request: latency from its start, chunks served and not served, bytes moved.
 * Each instance runs once, on one lane; its counters are atomic because chunk steps complete concurrently.
 */
final class LmcacheRequest implements Task {
    static final int PARALLEL_CHUNKS = 8;
    static final String EXISTS = "EXISTS";
    static final String GET_METADATA = "GET metadata";
    static final String GET_KV = "GET kv_bytes";
    static final String SET_KV = "SET kv_bytes";
    static final String SET_METADATA = "SET metadata";
    static final String REQUEST = "request";
    static final List<String> OPS = List.of(EXISTS, GET_METADATA, GET_KV, SET_KV, SET_METADATA, REQUEST);

    private final List<String> chunkKeys;
    private final int chunkBytes;
    private final String probeSuffix;
    private final AtomicInteger served = new AtomicInteger();
    private final AtomicLong moved = new AtomicLong();
    private final AtomicReference<String> failure = new AtomicReference<>("");

    LmcacheRequest(ChatTurn turn, int chunkBytes, String probeSuffix) {
        this.chunkKeys = turn.chunkKeys();
        this.chunkBytes = chunkBytes;
        this.probeSuffix = probeSuffix;
    }

    @Override
    public CompletableFuture<?> run(Lane lane) {
        return probe(lane, 0)
                .thenCompose(found -> retrieve(lane, found).thenCompose(ignored -> store(lane, found)))
                .thenRun(() -> {
                    lane.stats(REQUEST).recordLatency(System.nanoTime() - lane.taskStartNanos());
                    lane.stats(REQUEST).request(served.get(), chunkKeys.size() - served.get(), moved.get(),
                            failure.get());
                });
    }

    /** Chunks found before the first miss (an error ends the lookup like a miss). */
    private CompletableFuture<Integer> probe(Lane lane, int chunk) {
        if (chunk == chunkKeys.size()) {
            return CompletableFuture.completedFuture(chunk);
        }
        return lane.exists(EXISTS, key(chunk, probeSuffix)).thenCompose(outcome -> {
            note(outcome, EXISTS);
            return outcome == Outcome.OK ? probe(lane, chunk + 1) : CompletableFuture.completedFuture(chunk);
        });
    }

    private CompletableFuture<Void> retrieve(Lane lane, int found) {
        return Fanout.run(0, found, PARALLEL_CHUNKS, chunk ->
                lane.get(GET_METADATA, key(chunk, LmcacheKeys.METADATA), LmcacheKeys.METADATA_BYTES)
                        .thenCompose(meta -> {
                            note(meta, GET_METADATA);
                            if (meta != Outcome.OK) {
                                return CompletableFuture.completedFuture(meta);
                            }
                            moved.addAndGet(LmcacheKeys.METADATA_BYTES);
                            return lane.get(GET_KV, key(chunk, LmcacheKeys.KV_BYTES), chunkBytes);
                        })
                        .thenAccept(kv -> {
                            note(kv, GET_KV);
                            if (kv == Outcome.OK) {
                                served.incrementAndGet();
                                moved.addAndGet(chunkBytes);
                            }
                        }));
    }

    private CompletableFuture<Void> store(Lane lane, int found) {
        return Fanout.run(found, chunkKeys.size(), PARALLEL_CHUNKS, chunk ->
                lane.set(SET_KV, key(chunk, LmcacheKeys.KV_BYTES), 0, chunkBytes)
                        .thenCompose(kv -> {
                            note(kv, SET_KV);
                            if (kv != Outcome.OK) {
                                return CompletableFuture.completedFuture(kv);
                            }
                            moved.addAndGet(chunkBytes);
                            return lane.set(SET_METADATA, key(chunk, LmcacheKeys.METADATA), 0,
                                    LmcacheKeys.METADATA_BYTES);
                        })
                        .thenAccept(meta -> {
                            note(meta, SET_METADATA);
                            if (meta == Outcome.OK) {
                                moved.addAndGet(LmcacheKeys.METADATA_BYTES);
                            }
                        }));
    }

    private void note(Outcome outcome, String op) {
        if (outcome == Outcome.ERROR) {
            failure.compareAndSet("", op + " failed (see its row)");
        }
    }

    private byte[] key(int chunk, String suffix) {
        return LmcacheKeys.withSuffix(chunkKeys.get(chunk), suffix);
    }
}
