package io.kvtier.kvcache.sizing;

/**
 * The answer of {@code kvtier size} for one model and one set of {@link SizingOptions}: the KV footprint, what one
 * GPU has left for KV after weights and the activation reserve, how many sequences of the context length fit in GPU
 * memory, what each tier (HBM, DRAM, SSD) holds, and kvtier's {@code --memory}/{@code --disk} for the target. Computed
 * by {@link #of}; immutable.
 *
 * <p>GPU memory follows vLLM: it takes {@code gpu_memory_utilization} of each GPU's memory, loads its share of the
 * weights (1/tp), keeps the peak activation, CUDA-graph and non-torch memory it measures at startup (here the
 * activation reserve) and gives the rest to the KV cache ("Available KV cache memory" in its log).
 */
public record SizingReport(ModelSpec model, SizingOptions options, Precision kvDtype, KvFootprint kv,
                           Gpu gpu, long maxSequences, long maxSequencesWindowed, Tier hbm, Tier dram, Tier ssd,
                           Suggestion suggestion) {
    /** Memory of one GPU: what vLLM takes, the weights' share, the reserve and what is left for KV (never negative). */
    public record Gpu(long usable, long weights, long reserve, long kv, boolean weightsFit) {
    }

    /** One tier of one node: its budget, and the tokens, LMCache chunks and sequences of the context it holds. */
    public record Tier(String name, long bytes, long tokens, long chunks, long sequences) {
    }

    /**
     * kvtier's budgets for one node: {@code memory} and {@code disk} bytes, holding {@code sequences} sequences of the
     * context without evicting ({@code targeted}: the --target-sequences asked for, {@code bytes} in all; otherwise
     * what the DRAM and SSD budgets hold); {@code shortfall}: bytes of the target they cannot hold.
     *
     * <p>kvtier's disk tier keeps a copy of every value it demoted, also after promoting it back, and a graceful
     * shutdown writes the memory tier to disk; so what kvtier holds without evicting is about the larger of the two
     * budgets, not their sum. The disk tier is sized for the whole target, the memory tier for as much of it as DRAM
     * allows (the hot part).
     */
    public record Suggestion(boolean targeted, long sequences, long bytes, long memory, long disk, long shortfall) {
        /** The flags, in whole GiB rounded up, as {@code kvtier server} reads them: {@code --memory 40g --disk 64g}. */
        public String flags() {
            return "--memory " + gib(memory) + " --disk " + gib(disk);
        }

        /** Whole GiB, rounded up; at least 1g (kvtier always has both tiers). */
        private static String gib(long bytes) {
            return Math.max(1, ceilDiv(bytes, 1L << 30)) + "g";
        }
    }

    public static SizingReport of(ModelSpec model, SizingOptions o) {
        Precision kvDtype = o.kvDtype() != null ? o.kvDtype() : model.dtype();
        KvFootprint kv = KvFootprint.of(model, kvDtype, o.tp());
        Gpu gpu = gpu(model, o);
        long linear = kv.workerSequenceBytes(o.context(), false);
        long windowed = kv.workerSequenceBytes(o.context(), true);
        long instances = o.instances();
        long chunk = kv.chunkBytes(o.chunkTokens());
        long perSequence = sequenceStoredBytes(kv, o);
        long hbmTokens = instances * (gpu.kv() / kv.workerBytesPerToken());
        Tier hbm = new Tier("HBM", instances * o.tp() * gpu.kv(), hbmTokens, hbmTokens / o.chunkTokens(),
                instances * (gpu.kv() / linear));
        return new SizingReport(model, o, kvDtype, kv, gpu, instances * (gpu.kv() / linear),
                instances * (gpu.kv() / windowed), hbm, stored("DRAM", o.dram(), kv, o, chunk, perSequence),
                stored("SSD", o.ssd(), kv, o, chunk, perSequence), suggest(o, perSequence));
    }

    /** Bytes of all weights: the checkpoint's, or every parameter in --weights-dtype. */
    public long weightBytes() {
        return weightBytes(model, options);
    }

    private static long weightBytes(ModelSpec model, SizingOptions o) {
        return o.weightsDtype() != null ? model.weightBytes(o.weightsDtype()) : model.weightBytes();
    }

    private static Gpu gpu(ModelSpec model, SizingOptions o) {
        long usable = (long) Math.floor(o.gpuHbm() * o.gpuMemoryUtilization());
        long weights = ceilDiv(weightBytes(model, o), o.tp());
        long kv = usable - weights - o.activationReserve();
        return new Gpu(usable, weights, o.activationReserve(), Math.max(0, kv), usable - weights > 0);
    }

    /** A tier of kvtier: whole LMCache chunks (one worker's value each) in {@code bytes}. */
    private static Tier stored(String name, long bytes, KvFootprint kv, SizingOptions o, long chunk, long perSequence) {
        long chunks = bytes / chunk;
        long tokens = chunks / kv.storingWorkers() * o.chunkTokens();
        return new Tier(name, bytes, tokens, chunks, bytes / perSequence);
    }

    /** Bytes kvtier holds for one sequence of the context: its chunks (the last one counted whole), all workers'. */
    static long sequenceStoredBytes(KvFootprint kv, SizingOptions o) {
        return ceilDiv(o.context(), o.chunkTokens()) * kv.storingWorkers() * kv.chunkBytes(o.chunkTokens());
    }

    /** The target on disk, and in memory as far as DRAM allows; without a target, the budgets and what they hold. */
    private static Suggestion suggest(SizingOptions o, long perSequence) {
        long held = Math.max(o.dram(), o.ssd());
        if (o.targetSequences() == 0) {
            return new Suggestion(false, held / perSequence, held, o.dram(), o.ssd(), 0);
        }
        long need = Math.multiplyExact(o.targetSequences(), perSequence);
        long memory = Math.min(need, o.dram());
        long disk = Math.min(need, o.ssd());
        return new Suggestion(true, o.targetSequences(), need, memory, disk, Math.max(0, need - Math.max(memory,
                disk)));
    }

    static long ceilDiv(long a, long b) {
        return -Math.floorDiv(-a, b);
    }
}
