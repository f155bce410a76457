package io.kvtier.router.sim;

/**
 * The KV blocks one GPU of an engine holds, as vLLM sizes its cache at start: of the device memory, the fraction
 * {@code --gpu-memory-utilization} is vLLM's; from it go this GPU's share of the weights and the activation peak that
 * vLLM's profiling run measures (plus CUDA graphs and other non-torch memory, here one reserve), and what is left is
 * cut into blocks of {@code blockSize} tokens. Every GPU of a tensor-parallel group holds the same block count, each
 * its share of the heads.
 */
public record HbmBudget(Gpu gpu, double memoryUtilization, long weightBytesPerGpu, long activationReserveBytes,
                        long kvBytesPerTokenPerGpu, int blockSize) {
    public HbmBudget {
        if (!(memoryUtilization > 0 && memoryUtilization <= 1)) {
            throw new IllegalArgumentException("--gpu-memory-utilization " + memoryUtilization
                    + " is not within (0, 1]");
        }
        if (activationReserveBytes < 0 || kvBytesPerTokenPerGpu < 1 || blockSize < 1) {
            throw new IllegalArgumentException("activation reserve, KV bytes per token and block size must be positive");
        }
    }

    /** Bytes left for the KV cache on one GPU (negative when the weights do not fit). */
    public long kvCacheBytes() {
        return (long) (gpu.memoryBytes() * memoryUtilization) - weightBytesPerGpu - activationReserveBytes;
    }

    public long blockBytes() {
        return kvBytesPerTokenPerGpu * blockSize;
    }

    /** Blocks of the KV cache; an error naming the shortfall when the model does not fit. */
    public int blocks() {
        long kv = kvCacheBytes();
        long blocks = kv / blockBytes();
        if (blocks < 1) {
            throw new IllegalArgumentException(String.format(java.util.Locale.ROOT, "the model does not fit: %s has"
                    + " %.1f GiB, %.0f%% of it for vLLM, %.1f GiB of weights per GPU and %.1f GiB of activations leave"
                    + " %.2f GiB for the KV cache; use more tensor parallelism or a larger GPU", gpu,
                    gpu.memoryBytes() / GIB, memoryUtilization * 100, weightBytesPerGpu / GIB,
                    activationReserveBytes / GIB, kv / GIB));
        }
        return (int) Math.min(Integer.MAX_VALUE, blocks);
    }

    private static final double GIB = 1L << 30;
}
