package io.kvtier.bench.fleet;

/**
 * What the engines and the kvtier store did during one point, summed over the fleet (differences of counters taken at
 * the point's start and end). Prompt tokens split by where their KV came from: the engine's GPU prefix cache, kvtier's
 * memory tier, kvtier's disk tier, or recomputed (prefilled). kvtier's split between memory and disk is the store's
 * own count of chunk reads by tier (INFO kvcache {@code hits_memory}, {@code hits_disk}) applied to the tokens the
 * engines loaded. Immutable.
 *
 * @param promptTokens     prompt tokens of requests scheduled
 * @param gpuHitTokens     tokens found in an engine's GPU prefix cache
 * @param memoryHitTokens  tokens loaded from kvtier's memory tier
 * @param diskHitTokens    tokens loaded from kvtier's disk tier
 * @param recomputedTokens prompt tokens prefilled (neither cached nor loaded)
 * @param bytesRead        chunk bytes the engines fetched from kvtier
 * @param bytesWritten     chunk bytes the engines stored into kvtier
 * @param storesDropped    chunks not stored because an engine's store queue was full
 * @param loadFailures     chunk loads that failed or timed out (their tokens were recomputed)
 * @param preemptions      requests preempted for want of GPU blocks
 * @param gpuBusySeconds   modeled GPU step time, summed over engines
 * @param loadSeconds      time the engines' steps waited for chunk loads, summed (measured, in real KV bytes' time)
 * @param fetchBytesPerSecond real KV bytes loaded per second of loading: the transfer rate the engines saw; NaN
 *                         without loads
 * @param stepLagSeconds   how far the emulation's steps ran behind the model's times, summed (fidelity)
 */
public record EngineCounters(long promptTokens, long gpuHitTokens, long memoryHitTokens, long diskHitTokens,
                             long recomputedTokens, long bytesRead, long bytesWritten, long storesDropped,
                             long loadFailures, long preemptions, double gpuBusySeconds, double loadSeconds,
                             double fetchBytesPerSecond, double stepLagSeconds) {
    private double share(long tokens) {
        return promptTokens == 0 ? 0 : (double) tokens / promptTokens;
    }

    public double gpuHitRate() {
        return share(gpuHitTokens);
    }

    public double memoryHitRate() {
        return share(memoryHitTokens);
    }

    public double diskHitRate() {
        return share(diskHitTokens);
    }
}
