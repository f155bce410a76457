package io.kvtier.bench.compare;

import io.kvtier.bench.report.Latency;
import io.kvtier.bench.report.OpResult;
import java.util.List;
import org.HdrHistogram.Histogram;

/**
 * One system's figures for one {@link CaseKey}, averaged over its rounds: MB/s and p99 are the means of the rounds'
 * figures, the hit rate is all hits over all lookups, and the latency histogram is the rounds' histograms merged
 * (null when none was kept). Immutable, except that the histogram must not be modified.
 */
public record Measurement(int rounds, double mbPerSec, double p99Ms, double hitRate, long errors,
        Histogram histogram) {

    /** Averages the rows of one operation, one per round; throws on an empty list. */
    public static Measurement average(List<OpResult> perRound) {
        if (perRound.isEmpty()) {
            throw new IllegalArgumentException("nothing to average: no rounds measured this case");
        }
        double mb = perRound.stream().mapToDouble(OpResult::mbPerSec).average().orElseThrow();
        double p99 = perRound.stream().mapToDouble(r -> r.latencyMs().p99()).average().orElseThrow();
        long hits = perRound.stream().mapToLong(OpResult::hits).sum();
        long lookups = hits + perRound.stream().mapToLong(OpResult::misses).sum();
        long errors = perRound.stream().mapToLong(OpResult::errors).sum();
        return new Measurement(perRound.size(), mb, p99, lookups == 0 ? Double.NaN : (double) hits / lookups,
                errors, merged(perRound));
    }

    private static Histogram merged(List<OpResult> perRound) {
        Histogram all = null;
        for (OpResult r : perRound) {
            if (r.histogram().isEmpty()) {
                continue;
            }
            Histogram h = Latency.decode(r.histogram());
            if (all == null) {
                all = Latency.newHistogram();
            }
            all.add(h);
        }
        return all;
    }
}
