package io.kvtier.router.sim;

/**
 * An emulated engine's counters since it started, for benchmarks: where prompt tokens' KV came from, what the offload
 * path moved, and how faithfully the emulation kept the model's time. Immutable snapshot.
 *
 * @param promptTokens      prompt tokens of requests scheduled
 * @param gpuHitTokens      of those, found in the GPU prefix cache when first scheduled
 * @param externalHitTokens of those, loaded from kvtier (after a failed load: not counted)
 * @param prefillTokens     tokens prefilled (computed rather than cached or loaded; recomputation after preemption too)
 * @param busySeconds       modeled GPU time of all steps (compute; loads excluded)
 * @param loadSeconds       real time steps waited for kvtier loads
 * @param lagSeconds        how much later than the model's time steps ended (the emulation's own delay)
 */
public record EngineStats(long promptTokens, long gpuHitTokens, long externalHitTokens, long prefillTokens,
                          long preemptions, long finished, long bytesRead, long bytesWritten, long storesDropped,
                          long storeFailures, long loadFailures, long steps, double busySeconds, double loadSeconds,
                          double lagSeconds) {
}
