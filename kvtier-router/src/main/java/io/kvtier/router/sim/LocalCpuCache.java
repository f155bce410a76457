package io.kvtier.router.sim;

import io.kvtier.kvcache.key.LmcacheChunkKeys;
import java.util.LinkedHashMap;
import java.util.List;

/*
 * The baselines kvtier is compared against: the engine's own CPU memory as its KV offload tier, as vLLM's native CPU
 * offloading (OffloadingConnector with its CPU backend: asynchronous loads) and LMCache's local CPU backend
 * (synchronous by default) keep it: pinned host memory per engine, least recently used chunks evicted, loads over the
 * host-to-device link. No bytes move here: a load sleeps the time the chunk's real bytes take at the link's rate (a
 * stated figure, Gpu.hostLinkBandwidth, unless a GPU calibration measured it), scaled down by the run's bytes scale
 * as the engine scales its measured loads up again; stores cost the engine nothing (device-to-host copies run beside
 * the compute). Capacity is in real bytes, one worker's chunk times the tensor-parallel workers.
 */
/** An engine-local CPU KV tier: see the essay above. Thread-safe. */
final class LocalCpuCache extends ChunkOffload {
    private final LmcacheChunkKeys keys;
    private final int chunkTokens;
    private final long chunkBytes;   // real bytes of one chunk, all workers
    private final long capacity;     // real bytes
    private final double bytesPerSecond;
    private final double bytesScale;
    private final LinkedHashMap<Long, Boolean> chunks = new LinkedHashMap<>(1024, 0.75f, true);

    /**
     * @param workerChunkBytes real bytes of one worker's chunk
     * @param capacityBytes    real bytes the tier holds
     * @param bytesPerSecond   the host-to-device rate loads run at
     * @param bytesScale       the run's share of real bytes moved (loads sleep that share of their time)
     */
    LocalCpuCache(List<LmcacheChunkKeys> workers, long workerChunkBytes, long capacityBytes, double bytesPerSecond,
                  double bytesScale) {
        if (capacityBytes < workerChunkBytes * workers.size() || bytesPerSecond <= 0) {
            throw new IllegalArgumentException("a local CPU tier of " + capacityBytes + " bytes at " + bytesPerSecond
                    + " B/s cannot hold one chunk of " + workerChunkBytes * workers.size() + " bytes");
        }
        this.keys = workers.getFirst();
        this.chunkTokens = keys.chunkSize();
        this.chunkBytes = workerChunkBytes * workers.size();
        this.capacity = capacityBytes;
        this.bytesPerSecond = bytesPerSecond;
        this.bytesScale = bytesScale;
    }

    @Override
    int chunkTokens() {
        return chunkTokens;
    }

    @Override
    long[] chunkHashes(int[] tokens) {
        return keys.hashes(tokens);
    }

    @Override
    synchronized int lookup(long[] hashes) {
        for (int c = 0; c < hashes.length; c++) {
            if (chunks.get(hashes[c]) == null) {
                return c;
            }
        }
        return hashes.length;
    }

    @Override
    Loaded load(long[] hashes, int from, int to) {
        synchronized (this) {
            for (int c = from; c < to; c++) {
                if (chunks.get(hashes[c]) == null) {
                    return new Loaded(false, 0); // evicted since the lookup
                }
            }
        }
        long real = (to - from) * chunkBytes;
        long nanos = (long) (real / bytesPerSecond * 1e9 * bytesScale);
        long end = System.nanoTime() + nanos;
        for (long now; (now = System.nanoTime()) < end; ) {
            java.util.concurrent.locks.LockSupport.parkNanos(end - now);
        }
        bytesRead.addAndGet((long) (real * bytesScale));
        return new Loaded(true, (long) (real / bytesPerSecond * 1e9)); // all of it per byte: the real bytes' time
    }

    @Override
    synchronized void store(long[] hashes, int from, int to) {
        for (int c = from; c < to; c++) {
            if (chunks.containsKey(hashes[c])) {
                chunks.get(hashes[c]); // held already: now the most recently used
                continue;
            }
            if ((long) (chunks.size() + 1) * chunkBytes > capacity) {
                var eldest = chunks.keySet().iterator();
                if (!eldest.hasNext()) {
                    storesDropped.addAndGet(to - c);
                    return;
                }
                eldest.next();
                eldest.remove();
            }
            chunks.put(hashes[c], Boolean.TRUE);
            bytesWritten.addAndGet((long) (chunkBytes * bytesScale));
        }
    }

    @Override
    public void close() {
    }
}
