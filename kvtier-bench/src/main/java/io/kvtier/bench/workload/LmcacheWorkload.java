package io.kvtier.bench.workload;

import io.kvtier.bench.load.Limit;
import io.kvtier.bench.load.Phase;
import io.kvtier.bench.load.PhaseRunner;
import io.kvtier.common.Units;

/**
 * {@code lmcache}: one phase of chat requests ({@link ChatTraffic}), each issued as LMCache's Redis connector would
 * ({@link LmcacheRequest}). Reports the chunk hit rate (chunks served / chunks needed), bytes moved, and latency per
 * command and per request. Keys are LMCache's own ({@link LmcacheKeys}), so a rerun with the same seed finds the
 * chunks an earlier run stored. Run from one thread.
 */
public final class LmcacheWorkload implements Workload {
    private final LmcacheSpec spec;
    private final Limit limit;
    private final long seed;

    public LmcacheWorkload(LmcacheSpec spec, Limit limit, long seed) {
        this.spec = spec;
        this.limit = limit;
        this.seed = seed;
    }

    @Override
    public String name() {
        return spec.name();
    }

    @Override
    public void run(PhaseRunner runner) {
        ChatTraffic traffic = new ChatTraffic(spec, seed);
        runner.run(new Phase(name(), spec.chunkBytes(), "lmcache " + Units.bytes(spec.chunkBytes()) + " chunks",
                LmcacheRequest.OPS, limit,
                index -> new LmcacheRequest(traffic.next(), spec.chunkBytes(), spec.probeSuffix())));
    }
}
