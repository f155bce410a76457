package io.kvtier.kvcache.sizing;

/**
 * What {@code kvtier size} is asked about: the KV dtype ({@code null}: the model's dtype) and weight precision
 * ({@code null}: the checkpoint's), tensor parallelism, LMCache's chunk size, the GPUs of one node (HBM per GPU, how
 * many, vLLM's {@code gpu_memory_utilization}, and the bytes per GPU kept for activations), the DRAM and SSD that
 * kvtier may use on that node, the context length, and optionally how many sequences of that length kvtier should hold
 * ({@code targetSequences}, 0 for none). Immutable; validated on construction, errors name the flag and the limit.
 */
public record SizingOptions(Precision kvDtype, Precision weightsDtype, int tp, int chunkTokens, long gpuHbm, int gpus,
                            double gpuMemoryUtilization, long activationReserve, long dram, long ssd, int context,
                            long targetSequences) {
    public static final int MAX_CHUNK_TOKENS = 1 << 20;
    public static final int MAX_CONTEXT = 1 << 24;

    public SizingOptions {
        if (kvDtype != null && !kvDtype.isKvFormat()) {
            throw new IllegalArgumentException("--dtype " + kvDtype + " is not a KV-cache dtype (bf16, fp16, fp8, "
                    + "fp32)");
        }
        atLeast("--tp", tp, 1);
        if (gpus < tp) {
            throw new IllegalArgumentException("--gpus " + gpus + " is below the minimum " + tp + " (--tp " + tp
                    + ": one model instance spans " + tp + " GPUs)");
        }
        range("--chunk-tokens", chunkTokens, 1, MAX_CHUNK_TOKENS);
        range("--context", context, 1, MAX_CONTEXT);
        atLeast("--gpu-hbm", gpuHbm, 1L << 30);
        if (!(gpuMemoryUtilization > 0 && gpuMemoryUtilization <= 1)) {
            throw new IllegalArgumentException("--gpu-memory-utilization " + gpuMemoryUtilization
                    + " is outside (0, 1]");
        }
        atLeast("--activation-reserve", activationReserve, 0);
        if (activationReserve >= gpuHbm) {
            throw new IllegalArgumentException("--activation-reserve " + activationReserve + " B is not below "
                    + "--gpu-hbm " + gpuHbm + " B");
        }
        atLeast("--dram", dram, 0);
        atLeast("--ssd", ssd, 0);
        atLeast("--target-sequences", targetSequences, 0);
    }

    /** Model replicas on the node: {@code gpus / tp} (GPUs left over are unused). */
    public int instances() {
        return gpus / tp;
    }

    private static void atLeast(String flag, long value, long min) {
        if (value < min) {
            throw new IllegalArgumentException(flag + " " + value + " is below the minimum " + min);
        }
    }

    private static void range(String flag, long value, long min, long max) {
        atLeast(flag, value, min);
        if (value > max) {
            throw new IllegalArgumentException(flag + " " + value + " is above the maximum " + max);
        }
    }
}
