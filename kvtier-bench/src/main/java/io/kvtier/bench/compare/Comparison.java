package io.kvtier.bench.compare;

import io.kvtier.bench.limits.MachineLimitsResult;
import java.util.Objects;
import java.util.Optional;

/**
 * kvtier's and Redis's figures for one {@link CaseKey}, and their ratios (kvtier / Redis). A ratio is NaN when
 * either side is NaN, and infinite when Redis's figure is 0 and kvtier's is not. Immutable.
 */
public record Comparison(CaseKey key, Measurement kvtier, Measurement redis) {
    public Comparison {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(kvtier, "kvtier");
        Objects.requireNonNull(redis, "redis");
    }

    /** Above 1: kvtier moved more bytes per second. */
    public double throughputRatio() {
        return ratio(kvtier.mbPerSec(), redis.mbPerSec());
    }

    /** Below 1: kvtier's p99 was shorter. */
    public double p99Ratio() {
        return ratio(kvtier.p99Ms(), redis.p99Ms());
    }

    public double hitRateRatio() {
        return ratio(kvtier.hitRate(), redis.hitRate());
    }

    static double ratio(double kvtier, double redis) {
        if (Double.isNaN(kvtier) || Double.isNaN(redis)) {
            return Double.NaN;
        }
        if (redis == 0) {
            return kvtier == 0 ? Double.NaN : Double.POSITIVE_INFINITY;
        }
        return kvtier / redis;
    }

    /**
     * The machine limit kvtier's throughput is held against: loopback TCP with one stream for data moved over the
     * network from memory (setget, and overflow SETs), random 1 MiB reads with four readers (kvtier's default disk
     * threads) for overflow GETs whose working set exceeds the memory cap, so that most reads come from disk.
     */
    public Optional<Limit> limit(MachineLimitsResult limits) {
        if (key.isOverflow() && key.op().equals("GET") && key.factor() > 1) {
            return Optional.of(new Limit("disk random read", limits.diskRandomReadFourReadersBytesPerSecond()));
        }
        if (key.op().equals("GET") || key.op().equals("SET")) {
            return Optional.of(new Limit("loopback 1 stream", limits.loopbackOneStreamBytesPerSecond()));
        }
        return Optional.empty();
    }

    /** kvtier's throughput as a percentage of {@code limit}; NaN for a limit of 0. */
    public double kvtierPercentOf(Limit limit) {
        return limit.bytesPerSecond() <= 0 ? Double.NaN : kvtier.mbPerSec() * 1e6 / limit.bytesPerSecond() * 100;
    }

    /** A named machine limit in bytes per second. */
    public record Limit(String name, long bytesPerSecond) {}
}
