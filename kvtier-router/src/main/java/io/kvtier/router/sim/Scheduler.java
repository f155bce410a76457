package io.kvtier.router.sim;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/*
 * Continuous batching as vLLM's v1 scheduler does it (vllm/v1/core/sched/scheduler.py), one step at a time:
 * - a step has a token budget (max_num_batched_tokens) shared by every request in it;
 * - running requests come first, in the order they started: each gets what it still needs, one token when decoding,
 *   its next prompt chunk when prefilling (chunked prefill: a long prompt takes what is left of the budget, the rest
 *   in later steps);
 * - a running request whose next tokens need a block when none is free preempts the request that started last (its
 *   blocks are freed, it goes back to the head of the queue and recomputes everything later, vLLM's RECOMPUTE); if it
 *   is the last itself, it is preempted;
 * - then, while budget, max_num_seqs and blocks allow and nothing was preempted this step, waiting requests start in
 *   arrival order: each takes its longest prefix cached on the GPU, then asks the connector for more (LMCache's lookup:
 *   chunks held in kvtier beyond the GPU's hit become "computed" once loaded before the step runs), and at least one
 *   token is always computed, as vLLM recomputes the last token of a prompt that is cached whole;
 * - after the step, computed tokens advance; a request whose tokens are all computed samples one (the first token
 *   ends its prefill); full prompt blocks enter the prefix cache; a finished request frees its blocks.
 * Answer blocks are not cached (see BlockPool). With asynchronous loads (LoadMode.ASYNC, vLLM's WAITING_FOR_REMOTE_KVS)
 * a request whose chunks are to be loaded takes the blocks for them and waits off the batch ("loading") until the
 * engine reports the load done ({@link #loaded}); it then starts before any waiting request, its loaded tokens
 * computed. Owned by one engine's step thread.
 */

/** vLLM-style continuous batching over a {@link BlockPool}, optionally with an LMCache-like connector. */
final class Scheduler {
    /** A request's share of a step: {@code tokens} computed this step. */
    record Work(SimRequest request, int tokens) {
    }

    /** One step: the work, its shape for the cost model, and the requests whose KV must be loaded first. */
    record Step(List<Work> work, StepBatch batch, List<SimRequest> loads) {
        boolean isEmpty() {
            return work.isEmpty();
        }
    }

    private final BlockPool pool;
    private final int blockSize;
    private final int maxSeqs;
    private final int maxBatchedTokens;
    private final ChunkOffload connector;
    private final ArrayDeque<SimRequest> waiting = new ArrayDeque<>();
    private final List<SimRequest> running = new ArrayList<>();
    private final boolean asyncLoads;
    private final List<SimRequest> loading = new ArrayList<>();
    private final ArrayDeque<SimRequest> loaded = new ArrayDeque<>();
    long promptTokens;
    long gpuHitTokens;
    long externalHitTokens;
    long prefillTokens;
    long preemptions;
    long finished;

    /** {@code connector} null: no offload. */
    Scheduler(BlockPool pool, int maxSeqs, int maxBatchedTokens, ChunkOffload connector) {
        this(pool, maxSeqs, maxBatchedTokens, connector, false);
    }

    /** With {@code asyncLoads}, loads happen off the batch (see the essay above). */
    Scheduler(BlockPool pool, int maxSeqs, int maxBatchedTokens, ChunkOffload connector, boolean asyncLoads) {
        this.asyncLoads = asyncLoads;
        if (maxSeqs < 1 || maxBatchedTokens < 1) {
            throw new IllegalArgumentException("max seqs and max batched tokens must be at least 1");
        }
        this.pool = pool;
        this.blockSize = pool.blockSize();
        this.maxSeqs = maxSeqs;
        this.maxBatchedTokens = maxBatchedTokens;
        this.connector = connector;
    }

    void add(SimRequest r) {
        waiting.addLast(r);
    }

    int running() {
        return running.size();
    }

    int waiting() {
        return waiting.size() + loaded.size();
    }

    /** Requests whose chunks are being loaded off the batch (asynchronous loads). */
    int loading() {
        return loading.size();
    }

    /**
     * An asynchronous load of {@code r} ended: with {@code ok} it starts next (its loaded tokens computed), else it
     * gives back the blocks past its GPU hit and waits at the head of the queue to recompute them.
     */
    void loaded(SimRequest r, boolean ok) {
        if (!loading.remove(r)) {
            return;
        }
        r.loadTo = 0;
        if (ok) {
            loaded.addLast(r);
            return;
        }
        if (r.externalHitTokens > 0) {
            externalHitTokens -= r.externalHitTokens;
            r.externalHitTokens = 0;
        }
        pool.release(r.blocks);
        r.computed = 0;
        r.cachedBlocks = 0;
        r.externalChunks = 0; // do not look again: recompute and store
        waiting.addFirst(r);
    }

    Step schedule() {
        List<Work> work = new ArrayList<>();
        List<SimRequest> loads = new ArrayList<>();
        StepBatch batch = StepBatch.EMPTY;
        int budget = maxBatchedTokens;
        boolean preempted = false;
        for (int i = 0; i < running.size() && budget > 0; i++) {
            SimRequest r = running.get(i);
            int n = Math.min(r.tokens() - r.computed, budget);
            int fresh = blocksFor(r.computed + n) - r.blocks.size();
            boolean scheduled = true;
            while (fresh > 0 && !pool.grow(r.blocks, fresh)) {
                SimRequest victim = running.removeLast();
                preempt(victim);
                preempted = true;
                if (victim == r) {
                    scheduled = false;
                    break;
                }
            }
            if (scheduled) {
                batch = shape(batch, r, n);
                work.add(new Work(r, n));
                budget -= n;
            }
        }
        while (!preempted && budget > 0 && running.size() < maxSeqs && !loaded.isEmpty()) {
            SimRequest r = loaded.peekFirst(); // its loaded tokens are computed; it needs blocks for what follows
            int n = Math.min(r.tokens() - r.computed, budget);
            int fresh = blocksFor(r.computed + n) - r.blocks.size();
            if (fresh > 0 && !pool.grow(r.blocks, fresh)) {
                break;
            }
            loaded.removeFirst();
            running.add(r);
            batch = shape(batch, r, n);
            work.add(new Work(r, n));
            budget -= n;
        }
        while (!preempted && budget > 0 && running.size() < maxSeqs && !waiting.isEmpty()) {
            SimRequest r = waiting.peekFirst();
            int hits = Math.min(pool.cachedPrefix(r.blockHashes), (r.tokens() - 1) / blockSize);
            int start = hits * blockSize;
            int loadFrom = 0;
            int loadTo = 0;
            if (connector != null) {
                if (r.chunkHashes == null) {
                    r.chunkHashes = connector.chunkHashes(r.prompt);
                }
                if (r.externalChunks < 0) {
                    r.externalChunks = connector.lookup(r.chunkHashes);
                }
                int external = Math.min(r.externalChunks * connector.chunkTokens(), r.tokens() - 1);
                if (external > start) {
                    loadFrom = start / connector.chunkTokens();
                    loadTo = r.externalChunks;
                    start = external;
                }
            }
            boolean offBatch = asyncLoads && loadTo > 0;
            int n = Math.min(r.tokens() - start, budget);
            if (!pool.acquire(r.blocks, r.blockHashes, hits, blocksFor(offBatch ? start : start + n) - hits)) {
                break;
            }
            waiting.removeFirst();
            if (offBatch) {
                loading.add(r);
            } else {
                running.add(r);
            }
            r.computed = start;
            r.cachedBlocks = hits;
            r.loadFrom = loadFrom;
            r.loadTo = loadTo;
            if (loadTo > 0) {
                loads.add(r);
            }
            if (!r.scheduledOnce) {
                r.scheduledOnce = true;
                r.gpuHitTokens = hits * blockSize;
                r.externalHitTokens = start - hits * blockSize;
                promptTokens += r.prompt.length;
                gpuHitTokens += r.gpuHitTokens;
                externalHitTokens += r.externalHitTokens;
            }
            if (offBatch) {
                continue; // loads off the batch: the engine starts it, and this request joins once it is in
            }
            batch = shape(batch, r, n);
            work.add(new Work(r, n));
            budget -= n;
        }
        return new Step(work, batch, loads);
    }

    private StepBatch shape(StepBatch batch, SimRequest r, int n) {
        return n == 1 && r.computed >= r.prompt.length ? batch.plusDecode(r.computed)
                : batch.plusPrefill(r.computed, n);
    }

    private int blocksFor(int tokens) {
        return (tokens + blockSize - 1) / blockSize;
    }

    private void preempt(SimRequest r) {
        pool.release(r.blocks);
        r.computed = 0;
        r.cachedBlocks = 0;
        r.externalChunks = -1;
        r.loadTo = 0;
        r.preemptions++;
        preemptions++;
        waiting.addFirst(r);
    }

    /**
     * Applies a step that ran: computed tokens advance (a failed load's tokens are recomputed next step instead), full
     * prompt blocks are cached, requests whose tokens are all computed sample one, finished ones leave. Returns the
     * requests whose prompt was computed for the first time in this step (their chunks are to be stored).
     */
    List<SimRequest> complete(Step step, Set<SimRequest> failedLoads) {
        List<SimRequest> prefilled = new ArrayList<>();
        for (Work w : step.work()) {
            SimRequest r = w.request();
            if (r.loadTo > 0) {
                r.loadTo = 0;
                if (failedLoads.contains(r)) {
                    int lost = r.computed - r.cachedBlocks * blockSize;
                    if (r.externalHitTokens > 0) {
                        externalHitTokens -= r.externalHitTokens;
                        r.externalHitTokens = 0;
                    }
                    r.computed -= lost;
                    r.externalChunks = 0; // do not look again: recompute and store
                    continue;
                }
            }
            boolean prefill = !(w.tokens() == 1 && r.computed >= r.prompt.length);
            if (prefill) {
                prefillTokens += w.tokens();
            }
            r.computed += w.tokens();
            int fullPromptBlocks = Math.min(r.computed, r.prompt.length) / blockSize;
            if (fullPromptBlocks > r.cachedBlocks) {
                pool.cache(r.blocks, r.blockHashes, r.cachedBlocks, fullPromptBlocks, r.prompt);
                r.cachedBlocks = fullPromptBlocks;
            }
            if (r.computed == r.tokens()) {
                r.generated++;
                if (r.generated == 1) {
                    r.listener.prefilled(r.gpuHitTokens + r.externalHitTokens);
                    if (r.preemptions == 0) {
                        prefilled.add(r);
                    }
                }
                r.listener.tokens(1);
                if (r.done()) {
                    running.remove(r);
                    pool.release(r.blocks);
                    finished++;
                    r.listener.finished(null);
                }
            }
        }
        return prefilled;
    }

    /** Fails every request, waiting or running, and frees their blocks (the engine is closing). */
    void abortAll(String why) {
        running.addAll(loading);
        running.addAll(loaded);
        loading.clear();
        loaded.clear();
        for (SimRequest r : running) {
            pool.release(r.blocks);
            r.listener.finished(why);
        }
        running.clear();
        for (SimRequest r : waiting) {
            r.listener.finished(why);
        }
        waiting.clear();
    }
}
