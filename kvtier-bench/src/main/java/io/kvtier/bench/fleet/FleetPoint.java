package io.kvtier.bench.fleet;

import java.util.Objects;

/**
 * One measured point of the fleet benchmark: a configuration (offload tier and routing) at one rate. Immutable.
 *
 * @param offload  {@code none}, {@code dram} or {@code dram+ssd}
 * @param routing  {@code direct} (the client spreads requests round-robin) or the router's policy
 * @param gpus     GPUs in the fleet (engines x tensor parallelism), for requests/s per GPU
 * @param latency  what the clients measured
 * @param counters what the engines and the store did
 * @param timeline the point's requests over time, and the kill of a kvtier node if there was one
 * @param ceiling  the prompt tokens an unlimited cache shared by every engine would have held (computed offline from
 *                 the requests sent; {@link ReuseCeiling#NONE} where not computed)
 */
public record FleetPoint(String offload, String routing, String rateLabel, double offeredRps, int gpus,
                         LatencyStats latency, EngineCounters counters, FleetTimeline timeline, ReuseCeiling ceiling) {
    public FleetPoint {
        Objects.requireNonNull(timeline, "timeline");
        Objects.requireNonNull(ceiling, "ceiling");
        Objects.requireNonNull(offload, "offload");
        Objects.requireNonNull(routing, "routing");
        Objects.requireNonNull(latency, "latency");
        Objects.requireNonNull(counters, "counters");
    }

    /** A point without a ceiling. */
    public FleetPoint(String offload, String routing, String rateLabel, double offeredRps, int gpus,
                      LatencyStats latency, EngineCounters counters, FleetTimeline timeline) {
        this(offload, routing, rateLabel, offeredRps, gpus, latency, counters, timeline, ReuseCeiling.NONE);
    }

    /** The share of the ceiling's reusable tokens the engines reported cached; NaN without a ceiling. */
    public double ofCeiling() {
        return ceiling.reached(latency.cachedTokens());
    }

    /** The configuration's name, one line in a plot: e.g. {@code kvtier dram+ssd / prefix}. */
    public String config() {
        String what = offload.equals("none") ? "no offload"
                : offload.startsWith("vllm-cpu") ? "vllm cpu offload" + offload.substring("vllm-cpu".length())
                : offload.startsWith("lmcache-cpu") ? "lmcache local cpu" + offload.substring("lmcache-cpu".length())
                : "kvtier " + offload;
        return what + " / " + routing;
    }

    public double rpsPerGpu() {
        return latency.requestsPerSecond() / gpus;
    }
}
