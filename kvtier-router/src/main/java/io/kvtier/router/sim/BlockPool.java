package io.kvtier.router.sim;

import io.kvtier.router.events.KvEvent;
import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.SequencedSet;

/*
 * An engine's GPU block pool with prefix caching, as vLLM's v1 KV cache manager keeps it (vllm/v1/core/block_pool.py):
 * - a prompt's full blocks are named by a chained hash (parent hash, block tokens), salted per process as vLLM's is
 *   when PYTHONHASHSEED is unset, so that nothing outside can recompute the names;
 * - a request first takes the longest run of cached blocks its prompt starts with (a hit), then fresh blocks for the
 *   rest of its prompt and its answer, from the head of the free queue (least recently freed first); a fresh block
 *   that still held a cached prefix is evicted (BlockRemoved);
 * - once computed, the prompt's new full blocks are cached (BlockStored, chained to the last hit block);
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

    /** A request's blocks: the cached run it started with, then its own. */
    record Allocation(int[] blocks, int hitBlocks, long[] promptHashes) {
    }

    /**
     * Allocates blocks for a prompt of {@code prompt} tokens and an answer of {@code answer} tokens, taking the cached
     * prefix it starts with; null if the pool cannot hold it now (the request waits).
     */
    Allocation allocate(int[] prompt, int answer) {
        long[] hashes = chain(prompt);
        int hits = 0;
        while (hits < hashes.length && cached.get(hashes[hits]) >= 0) {
            hits++;
        }
        // vLLM always computes at least the prompt's last token: a fully cached prompt recomputes its last block.
        if (hits == hashes.length && hits > 0 && hits * blockSize == prompt.length) {
            hits--;
        }
        int needed = (prompt.length + answer + blockSize - 1) / blockSize;
        int fresh = needed - hits;
        int reusable = 0;
        for (int h = 0; h < hits; h++) {
            if (refs[cached.get(hashes[h])] == 0) {
                reusable++;
            }
        }
        if (free.size() - reusable < fresh) {
            return null;
        }
        int[] owned = new int[needed];
        for (int h = 0; h < hits; h++) {
            int b = cached.get(hashes[h]);
            if (refs[b]++ == 0) {
                free.remove(b);
            }
            owned[h] = b;
        }
        for (int i = hits; i < needed; i++) {
            int b = free.removeFirst();
            evict(b);
            refs[b] = 1;
            owned[i] = b;
        }
        return new Allocation(owned, hits, hashes);
    }

    /** Caches the prompt's full blocks after its hits, now computed (BlockStored). */
    void computed(Allocation a, int[] prompt) {
        int first = a.hitBlocks();
        List<Long> stored = new ArrayList<>();
        int from = -1;
        for (int i = first; i < a.promptHashes().length; i++) {
            long h = a.promptHashes()[i];
            if (cached.get(h) >= 0) {
                continue; // another request cached the same block meanwhile
            }
            if (from < 0) {
                from = i;
            }
            if (from + stored.size() != i) {
                break; // keep one event a consecutive run
            }
            int b = a.blocks()[i];
            hashOf[b] = h;
            cached.put(h, b);
            stored.add(h);
        }
        if (!stored.isEmpty()) {
            int[] tokens = java.util.Arrays.copyOfRange(prompt, from * blockSize, (from + stored.size()) * blockSize);
            Long parent = from == 0 ? null : a.promptHashes()[from - 1];
            events.add(new KvEvent.BlockStored(stored.stream().mapToLong(Long::longValue).toArray(), parent, tokens,
                    blockSize, null, "GPU", null, null, null, null, null));
        }
    }

    /** Frees a finished request's blocks, last first. */
    void release(Allocation a) {
        int[] owned = a.blocks();
        for (int i = owned.length - 1; i >= 0; i--) {
            int b = owned[i];
            if (--refs[b] == 0) {
                free.addLast(b);
            }
        }
    }

    /** Drops every cached block (vLLM's prefix cache reset): AllBlocksCleared. */
    void reset() {
        for (int b = 0; b < blocks; b++) {
            hashOf[b] = 0;
        }
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
