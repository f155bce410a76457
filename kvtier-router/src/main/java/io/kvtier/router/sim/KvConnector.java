package io.kvtier.router.sim;

import io.kvtier.client.Reply;
import io.kvtier.kvcache.key.LmcacheChunkKeys;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * The engine's offload path, shaped as LMCache's vLLM connector with its redis:// remote backend
 * (lmcache/v1/storage_backend/connector/redis_connector.py) drives it:
 *   lookup    when the scheduler first considers a request: EXISTS <chunk>metadata, chunk after chunk from the first,
 *             one round trip each, until the first miss (the scheduler's get_num_new_matched_tokens);
 *   retrieve  before the step that starts the request's prefill: GET <chunk>metadata then GET <chunk>kv_bytes for
 *             every chunk beyond the GPU's own prefix hit, every tensor-parallel worker its own key, 8 at a time; the
 *             step waits for them (LMCache's default synchronous load, start_load_kv) so the whole batch pays the
 *             transfer, as it does on a real engine;
 *   store     once a request's prompt is computed: SET <chunk>kv_bytes then SET <chunk>metadata for its chunks past
 *             those the lookup found, asynchronously, a bounded number of bytes queued (LMCache's local CPU buffer);
 *             chunks beyond the bound are not stored, and counted.
 * Chunks are LMCache's: 256 tokens by default, keys model@world_size@worker@hash@dtype with CPython-hash chaining
 * (LmcacheChunkKeys, PYTHONHASHSEED=0 as a fleet sharing a cache must run), one value per worker of the chunk's KV
 * bytes for that worker (KvFootprint.chunkBytes): real bytes, 32 MiB for Llama-3.1-8B in bf16. A value starts with the
 * chunk's hash and worker; a fetched value of the wrong length or header is a miss (recomputed) and counted, never
 * used. The body is one shared read-only buffer sent without copying, so a store costs the wire, not the heap.
 */

/** An engine's LMCache-like connector to kvtier: lookup, synchronous retrieve, asynchronous store. Thread-safe. */
final class KvConnector extends ChunkOffload {
    private static final Logger log = LoggerFactory.getLogger(KvConnector.class);
    static final String KV_BYTES = "kv_bytes";
    static final String METADATA = "metadata";
    /** LMCache's RemoteMetadata: seven little-endian int32 (length, shape[4], dtype, format). */
    static final int METADATA_BYTES = 28;
    private static final int HEADER_BYTES = 16;
    private static final int STORES_IN_FLIGHT = 8;
    /** Chunk values fetched at once: a long prompt's load holds at most this many in memory. */
    private static final int LOADS_IN_FLIGHT = 8;

    private final KvtierLink link;
    private final SharedMemoryLanes shm; // chunk bytes through a co-located node's shared memory; null: RESP
    private final double bytesScale;     // share of each chunk's real bytes moved (the run's --kv-bytes-scale)
    private final LmcacheChunkKeys[] workers;
    private final int chunkTokens;
    private final int chunkBytes;
    private final long bufferBytes;
    private final long timeoutMillis;
    private final ByteBuf body;
    private final byte[] metadata;
    private final java.util.concurrent.Semaphore storeSlots = new java.util.concurrent.Semaphore(STORES_IN_FLIGHT);
    private final AtomicLong queuedBytes = new AtomicLong();
    private final AtomicLong lookups = new AtomicLong();
    private final java.util.concurrent.ExecutorService storer = java.util.concurrent.Executors.newSingleThreadExecutor(
            Thread.ofPlatform().daemon().name("kvtier-engine-sim-store").factory());

    /**
     * @param workers     LMCache's key maker of every tensor-parallel worker, in worker order (same model, chunk size,
     *                    hash and NONE_HASH)
     * @param chunkBytes  one worker's bytes of one chunk
     * @param bufferBytes most bytes queued for storing at once
     */
    KvConnector(KvtierLink link, List<LmcacheChunkKeys> workers, long chunkBytes, long bufferBytes,
            long timeoutMillis) {
        this(link, workers, chunkBytes, bufferBytes, timeoutMillis, null, 1.0);
    }

    /**
     * As above; with {@code shm} (a node on this host, --shm yes) each chunk's bytes go through its shared memory, and
     * metadata and lookups over RESP, as an engine using TensorPool for the bytes would.
     */
    KvConnector(KvtierLink link, List<LmcacheChunkKeys> workers, long chunkBytes, long bufferBytes,
            long timeoutMillis, java.util.function.Function<byte[], SharedMemoryLanes> shm, double bytesScale) {
        this.bytesScale = bytesScale;
        if (chunkBytes > Integer.MAX_VALUE - HEADER_BYTES || chunkBytes < HEADER_BYTES) {
            throw new IllegalArgumentException("a chunk of " + chunkBytes + " bytes per worker is outside 16 B..2 GiB;"
                    + " use a smaller --lmcache-chunk-size");
        }
        this.link = link;
        this.workers = workers.toArray(LmcacheChunkKeys[]::new);
        this.chunkTokens = this.workers[0].chunkSize();
        this.chunkBytes = (int) chunkBytes;
        this.bufferBytes = bufferBytes;
        this.timeoutMillis = timeoutMillis;
        byte[] fill = new byte[this.chunkBytes - HEADER_BYTES];
        for (int i = 0; i < fill.length; i++) {
            fill[i] = (byte) (i * 31 + 7);
        }
        this.body = Unpooled.unreleasableBuffer(Unpooled.directBuffer(fill.length).writeBytes(fill));
        ByteBuf m = Unpooled.buffer(METADATA_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        m.writeIntLE(this.chunkBytes).writeIntLE(1).writeIntLE(2).writeIntLE(chunkTokens)
                .writeIntLE(this.chunkBytes / Math.max(1, 2 * chunkTokens)).writeIntLE(0).writeIntLE(1);
        this.metadata = new byte[METADATA_BYTES];
        m.readBytes(metadata);
        this.shm = shm == null ? null : shm.apply(fill);
    }

    @Override
    int chunkTokens() {
        return chunkTokens;
    }

    /** The chain hashes of {@code tokens}' full chunks (LMCache's; the same for every worker). */
    @Override
    long[] chunkHashes(int[] tokens) {
        return workers[0].hashes(tokens);
    }

    /**
     * Chunks, from the first, that kvtier holds: one EXISTS per chunk, in turn, until the first miss or error (an error
     * is a miss: the engine recomputes). Blocks for the round trips.
     */
    @Override
    int lookup(long[] hashes) {
        lookups.incrementAndGet();
        for (int c = 0; c < hashes.length; c++) {
            byte[] key = key(0, hashes[c], METADATA);
            try {
                Reply r = link.send(key, "EXISTS", key).get(timeoutMillis, TimeUnit.MILLISECONDS);
                if (!(r instanceof Reply.Int n && n.value() == 1)) {
                    Reply.release(r);
                    return c;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return c;
            } catch (ExecutionException | TimeoutException e) {
                log.debug("lookup of chunk {} failed: {}", c, e.toString());
                return c;
            }
        }
        return hashes.length;
    }

    /**
     * Fetches chunks {@code [from, to)} of every worker, {@value #LOADS_IN_FLIGHT} values at a time (LMCache gathers
     * them all at once into GPU memory; here they land in this process's memory, hence the bound), and waits for
     * them: true when every one arrived whole. A missing, short or foreign value, an error or a timeout makes it false (the caller recomputes those
     * tokens) and is counted.
     */
    @Override
    Loaded load(long[] hashes, int from, int to) {
        boolean all = true;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        List<CompletableFuture<Boolean>> window = new ArrayList<>();
        AtomicLong windowModel = new AtomicLong(); // the window's longest fetch, as the real bytes would take it
        long windowStart = System.nanoTime();
        long modeled = 0;
        for (int c = from; c < to && all; c++) {
            for (int w = 0; w < workers.length; w++) {
                window.add(fetch(hashes[c], w, windowModel));
            }
            if (window.size() >= LOADS_IN_FLIGHT || c == to - 1) {
                all = awaitAll(window, deadline);
                window.clear();
                long now = System.nanoTime();
                modeled += Math.max(now - windowStart, windowModel.getAndSet(0));
                windowStart = now;
            }
        }
        if (!all) {
            loadFailures.incrementAndGet();
        }
        return new Loaded(all, modeled);
    }

    /**
     * One worker's chunk: its metadata, then its bytes, checked. Records in {@code model} (the window's longest) the
     * fetch's time as the real bytes would take it: its metadata GET as measured (a round trip, no payload), its value
     * GET's own round trip as the metadata's, and the rest of the value GET's time, the per-byte part, scaled up by
     * the bytes scale (issue 32: scaling the round trips too overstated small scales several-fold).
     */
    private CompletableFuture<Boolean> fetch(long hash, int worker, AtomicLong model) {
        byte[] meta = key(worker, hash, METADATA);
        byte[] kv = key(worker, hash, KV_BYTES);
        long sent = System.nanoTime();
        return link.send(meta, "GET", meta).thenCompose(m -> {
            long roundTrip = System.nanoTime() - sent;
            boolean found = m instanceof Reply.Bulk b && b.content().readableBytes() == METADATA_BYTES;
            Reply.release(m);
            if (!found) {
                return CompletableFuture.completedFuture(false);
            }
            long asked = System.nanoTime();
            CompletableFuture<Boolean> got = shm != null ? shm.load(kv, hash, worker, bytesRead::addAndGet)
                    : link.send(kv, "GET", kv).thenApply(v -> verify(v, hash, worker));
            return got.thenApply(ok -> {
                long value = System.nanoTime() - asked;
                model.accumulateAndGet(roundTrip + ChunkOffload.modeled(value, roundTrip, bytesScale), Math::max);
                return ok;
            });
        });
    }

    private static boolean awaitAll(List<CompletableFuture<Boolean>> parts, long deadline) {
        boolean all = true;
        for (CompletableFuture<Boolean> p : parts) {
            try {
                all &= p.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                all = false;
            } catch (ExecutionException | TimeoutException e) {
                all = false;
            }
        }
        return all;
    }

    private boolean verify(Reply v, long hash, int worker) {
        try {
            if (v instanceof Reply.Bulk b) {
                ByteBuf c = b.content();
                bytesRead.addAndGet(c.readableBytes());
                return c.readableBytes() == chunkBytes && c.getLong(c.readerIndex()) == hash
                        && c.getLong(c.readerIndex() + 8) == worker;
            }
            return false;
        } finally {
            Reply.release(v);
        }
    }

    /**
     * Queues chunks {@code [from, to)} for storing (every worker's value, then its metadata) and returns at once;
     * chunks that would take the queue past its bound are dropped and counted.
     */
    @Override
    void store(long[] hashes, int from, int to) {
        for (int c = from; c < to; c++) {
            long bytes = (long) chunkBytes * workers.length;
            if (queuedBytes.addAndGet(bytes) > bufferBytes) {
                queuedBytes.addAndGet(-bytes);
                storesDropped.addAndGet(to - c);
                return;
            }
            long h = hashes[c];
            storer.execute(() -> storeChunk(h, bytes));
        }
    }

    private void storeChunk(long hash, long bytes) {
        try {
            for (int w = 0; w < workers.length; w++) {
                storeSlots.acquire();
                byte[] kv = key(w, hash, KV_BYTES);
                byte[] meta = key(w, hash, METADATA);
                CompletableFuture<Reply> stored;
                if (shm != null) {
                    stored = shm.store(kv, hash, w).thenApply(ok -> ok ? new Reply.Simple("OK") : new Reply.Error(
                            "store through shared memory failed"));
                } else {
                    ByteBuf header = Unpooled.buffer(HEADER_BYTES).writeLong(hash).writeLong(w);
                    stored = link.send(kv, "SET", kv, Unpooled.wrappedBuffer(header, body.duplicate()));
                }
                stored
                        .thenCompose(r -> {
                            boolean ok = r instanceof Reply.Simple;
                            Reply.release(r);
                            if (!ok) {
                                return CompletableFuture.completedFuture((Reply) new Reply.Error("SET failed"));
                            }
                            bytesWritten.addAndGet(chunkBytes);
                            return link.send(meta, "SET", meta, metadata);
                        })
                        .orTimeout(timeoutMillis, TimeUnit.MILLISECONDS)
                        .whenComplete((r, e) -> {
                            if (e != null || !(r instanceof Reply.Simple)) {
                                storeFailures.incrementAndGet();
                            }
                            Reply.release(r);
                            storeSlots.release();
                        });
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            queuedBytes.addAndGet(-bytes);
        }
    }

    private byte[] key(int worker, long hash, String suffix) {
        return (workers[worker].key(hash) + suffix).getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        storer.shutdownNow();
        if (shm != null) {
            shm.close();
        }
        link.close();
    }
}
