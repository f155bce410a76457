package io.kvtier.router.sim;

import io.kvtier.router.events.KvEvent;
import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.SequencedSet;

/*
 * An engine's GPU block pool with prefix caching, as vLLM's v1 KV cache manager keeps it (vllm/v1/core/block_pool.py):
 * - a prompt's full blocks are named by a chained hash (parent hash, block tokens), salted per process as vLLM's is
 *   when PYTHONHASHSEED is unset, so that nothing outside can recompute the names;
 * - a request first takes the longest run of cached blocks its prompt starts with (a hit), then fresh blocks as its
 *   computed tokens need them, step by step, from the head of the free queue (least recently freed first); a fresh
 *   block that still held a cached prefix is evicted (BlockRemoved);
 * - once computed, the prompt's new full blocks are cached (BlockStored, chained to the block before them);
 * - a finished request frees its blocks to the tail of the free queue, last block first, so that a prompt's tail is
 *   evicted before its head (vLLM frees in reverse order for the same reason).
 * Answer blocks are not cached here (vLLM caches full answer blocks too; a chat's next turn re-sends the answer as
 * prompt text, which the router sees as prompt tokens either way).
 */

/** A GPU block pool with vLLM's prefix caching and its KV events; not thread-safe (the engine's scheduler owns it). */
final class BlockPool {
    private final int blocks;
    private final int blockSize;
    private final long seed;
    private final Long2IntOpenHashMap cached = new Long2IntOpenHashMap();   // block hash -> block
    private final long[] hashOf;                                            // block -> hash (0: none)
    private final int[] refs;
    private final SequencedSet<Integer> free = new LinkedHashSet<>();
    private final List<KvEvent> events = new ArrayList<>();

    BlockPool(int blocks, int blockSize, long seed) {
        this.blocks = blocks;
        this.blockSize = blockSize;
        this.seed = seed;
        hashOf = new long[blocks];
        refs = new int[blocks];
        cached.defaultReturnValue(-1);
        for (int b = 0; b < blocks; b++) {
            free.addLast(b);
        }
    }

    int blocks() {
        return blocks;
    }

    int blockSize() {
        return blockSize;
    }

    /** How many of {@code hashes}, from the first, name cached blocks. */
    int cachedPrefix(long[] hashes) {
        int hits = 0;
        while (hits < hashes.length && cached.get(hashes[hits]) >= 0) {
            hits++;
        }
        return hits;
    }

    /**
     * Takes the first {@code hits} cached blocks of {@code hashes} and {@code fresh} free ones into {@code owned} (which
     * must be empty); false, taking nothing, when the free queue cannot spare them (cached blocks nobody holds sit in
     * the free queue and count against it).
     */
    boolean acquire(IntArrayList owned, long[] hashes, int hits, int fresh) {
        int reusable = 0;
        for (int h = 0; h < hits; h++) {
            if (refs[cached.get(hashes[h])] == 0) {
                reusable++;
            }
        }
        if (free.size() - reusable < fresh) {
            return false;
        }
        for (int h = 0; h < hits; h++) {
            int b = cached.get(hashes[h]);
            if (refs[b]++ == 0) {
                free.remove(b);
            }
            owned.add(b);
        }
        grow(owned, fresh);
        return true;
    }

    /** Appends {@code fresh} free blocks to {@code owned}; false, taking nothing, when there are not that many. */
    boolean grow(IntArrayList owned, int fresh) {
        if (free.size() < fresh) {
            return false;
        }
        for (int i = 0; i < fresh; i++) {
            int b = free.removeFirst();
            evict(b);
            refs[b] = 1;
            owned.add(b);
        }
        return true;
    }

    int freeBlocks() {
        return free.size();
    }

    /**
     * Caches the full blocks {@code [from, to)} of a request whose blocks are {@code owned} and whose prompt blocks are
     * named by {@code hashes} (BlockStored, one event per consecutive run); a block another request cached meanwhile
     * under the same hash is skipped, as vLLM does.
     */
    void cache(IntArrayList owned, long[] hashes, int from, int to, int[] prompt) {
        int runStart = -1;
        List<Long> run = new ArrayList<>();
        for (int i = from; i < to; i++) {
            long h = hashes[i];
            int b = owned.getInt(i);
            if (cached.get(h) >= 0 || hashOf[b] != 0) {
                flush(run, runStart, hashes, prompt);
                run.clear();
                runStart = -1;
                continue;
            }
            if (runStart < 0) {
                runStart = i;
            }
            hashOf[b] = h;
            cached.put(h, b);
            run.add(h);
        }
        flush(run, runStart, hashes, prompt);
    }

    private void flush(List<Long> run, int from, long[] hashes, int[] prompt) {
        if (run.isEmpty()) {
            return;
        }
        int[] tokens = Arrays.copyOfRange(prompt, from * blockSize, (from + run.size()) * blockSize);
        Long parent = from == 0 ? null : hashes[from - 1];
        events.add(new KvEvent.BlockStored(run.stream().mapToLong(Long::longValue).toArray(), parent, tokens,
                blockSize, null, "GPU", null, null, null, null, null));
    }

    /** Frees a finished or preempted request's blocks, last first, and empties {@code owned}. */
    void release(IntArrayList owned) {
        for (int i = owned.size() - 1; i >= 0; i--) {
            int b = owned.getInt(i);
            if (--refs[b] == 0) {
                free.addLast(b);
            }
        }
        owned.clear();
    }

    /** Drops every cached block (vLLM's prefix cache reset): AllBlocksCleared. */
    void reset() {
        Arrays.fill(hashOf, 0);
        cached.clear();
        events.add(new KvEvent.AllBlocksCleared());
    }

    /** The events since the last call, in order (one batch per scheduler step). */
    List<KvEvent> drainEvents() {
        List<KvEvent> out = List.copyOf(events);
        events.clear();
        return out;
    }

    /** Fraction of blocks in use by running requests (vLLM's kv_cache_usage_perc). */
    double usage() {
        return 1.0 - (double) free.size() / blocks;
    }

    int cachedBlocks() {
        return cached.size();
    }

    private void evict(int b) {
        long h = hashOf[b];
        if (h != 0) {
            cached.remove(h);
            hashOf[b] = 0;
            events.add(new KvEvent.BlockRemoved(new long[] {h}, "GPU", null));
        }
    }

    /** The process-salted chained hashes of the prompt's full blocks (never 0). */
    long[] chain(int[] prompt) {
        long[] out = new long[prompt.length / blockSize];
        long h = seed;
        for (int i = 0; i < out.length; i++) {
            for (int t = i * blockSize; t < (i + 1) * blockSize; t++) {
                h = (h ^ prompt[t]) * 0x100000001B3L + 0x9E3779B97F4A7C15L;
                h ^= h >>> 29;
            }
            h = h == 0 ? 1 : h;
            out[i] = h;
        }
        return out;
    }
}
