package io.kvtier.kvcache.simulate;

/**
 * Serves a trace the way vLLM with LMCache's remote connector uses kvtier, against one {@link TierModel}. For each
 * request: the prompt's full chunks are looked up in order and the leading ones that exist are read, stopping at
 * the first miss (LMCache's prefix lookup: chunk k's key hashes the whole prefix up to it); those tokens are the
 * request's hits. Then the full chunks of the prompt (and of the answer with {@code saveDecode}) from the first miss
 * on are stored, skipping any the store still holds. Chunk keys come from the trace ({@link ChunkedTrace#chunkKey}),
 * which makes two keys equal exactly when the two prompts' chunk hashes would agree. Not thread-safe.
 */
public final class Replay {
    private Replay() {
    }

    /**
     * Replays {@code trace} against a store with {@code budget}.
     *
     * @throws IllegalArgumentException if the budget cannot hold one chunk (see {@link TierModel#refusal}), or the
     *                                  trace cannot be cut into these chunks ({@link ChunkedTrace#refusal})
     */
    public static SimulationResult run(ChunkedTrace trace, ChunkOptions chunks, Budget budget) {
        return run(trace, chunks, budget, Policy.KVTIER);
    }

    /** As {@link #run(ChunkedTrace, ChunkOptions, Budget)}, the memory tier evicting by {@code policy}. */
    public static SimulationResult run(ChunkedTrace trace, ChunkOptions chunks, Budget budget, Policy policy) {
        checkReplayable(trace, chunks);
        checkTimed(trace, budget);
        String refusal = TierModel.refusal(budget, chunks.chunkBytes());
        if (refusal != null) {
            throw new IllegalArgumentException(refusal);
        }
        return replay(trace, chunks, budget, new TierModel(budget, policy), policy);
    }

    static void checkReplayable(ChunkedTrace trace, ChunkOptions chunks) {
        String refusal = trace.refusal(chunks);
        if (refusal != null) {
            throw new IllegalArgumentException(refusal);
        }
    }

    /** Refuses a disk write limit on a trace without times: a rate needs a clock. */
    static void checkTimed(ChunkedTrace trace, Budget budget) {
        if (budget.diskWriteLimit() > 0 && !trace.timed()) {
            throw new IllegalArgumentException("--disk-write-limit is a rate and needs a trace with times ("
                    + "\"time\" or \"timestamp\" on every request); this trace has none");
        }
    }

    static SimulationResult replay(ChunkedTrace trace, ChunkOptions chunks, Budget budget, TierModel store,
                                   Policy policy) {
        int c = chunks.chunkTokens();
        long memoryHitChunks = 0;
        long diskHitChunks = 0;
        long lookedUpChunks = 0;
        long allChunks = 0;
        for (int r = 0; r < trace.size(); r++) {
            store.clock(trace.time(r));
            int promptChunks = trace.promptTokens(r) / c;
            lookedUpChunks += promptChunks;
            allChunks += (trace.promptTokens(r) + c - 1) / c;
            int hit = 0;
            while (hit < promptChunks) {
                TierModel.Hit h = store.get(trace.chunkKey(r, hit, c), hit == 0 ? null : trace.chunkKey(r, hit - 1, c));
                if (h == TierModel.Hit.MISS) {
                    break;
                }
                if (h == TierModel.Hit.MEMORY) {
                    memoryHitChunks++;
                } else {
                    diskHitChunks++;
                }
                hit++;
            }
            long saved = trace.promptTokens(r) + (chunks.saveDecode() ? (long) trace.newTokens(r) : 0);
            long savedChunks = saved / c;
            for (int k = hit; k < savedChunks; k++) {
                long key = trace.chunkKey(r, k, c);
                if (!store.contains(key)) {
                    store.put(key, chunks.chunkBytes(), k == 0 ? null : trace.chunkKey(r, k - 1, c));
                }
            }
        }
        return new SimulationResult(budget, trace.size(), trace.totalPromptTokens(), memoryHitChunks * c,
                diskHitChunks * c, store.counters.memoryReadBytes, store.counters.diskReadBytes,
                store.counters.writtenBytes, store.counters.diskWrittenBytes, store.counters.evictedBytes,
                store.counters.promotions, store.evictedRegions(), memoryHitChunks + diskHitChunks, lookedUpChunks,
                allChunks, policy, store.counters.admissionDroppedBytes);
    }

    /**
     * The hit rate with unlimited memory: every chunk stored stays. The ceiling no budget can pass, and with it the
     * bytes of every chunk ever stored (the working set).
     */
    public static SimulationResult unlimited(ChunkedTrace trace, ChunkOptions chunks) {
        checkReplayable(trace, chunks);
        long huge = Long.MAX_VALUE / 4;
        return replay(trace, chunks, new Budget(huge, 0), new TierModel(new Budget(huge, 0)), Policy.KVTIER);
    }
}
