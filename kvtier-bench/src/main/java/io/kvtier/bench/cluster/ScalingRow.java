package io.kvtier.bench.cluster;

import io.kvtier.bench.report.Latency;
import io.kvtier.bench.report.LatencySummary;
import io.kvtier.bench.report.OpResult;
import java.util.List;
import org.HdrHistogram.Histogram;

/**
 * One operation on one cluster size, over its rounds: ops/s and MB/s are the means of the rounds, p50 and p99 come
 * from the rounds' histograms merged, errors are summed. Immutable.
 */
public record ScalingRow(String op, int nodes, int rounds, double opsPerSec, double mbPerSec, double p50Ms,
        double p99Ms, long errors, long wrongBytes) {

    /** The rows of one operation, one per round; throws on an empty list. */
    static ScalingRow of(String op, int nodes, List<OpResult> perRound) {
        if (perRound.isEmpty()) {
            throw new IllegalArgumentException("no rounds measured " + op + " on " + nodes + " nodes");
        }
        Histogram all = Latency.newHistogram();
        for (OpResult r : perRound) {
            if (!r.histogram().isEmpty()) {
                all.add(Latency.decode(r.histogram()));
            }
        }
        LatencySummary l = all.getTotalCount() == 0 ? LatencySummary.EMPTY : Latency.summarize(all);
        return new ScalingRow(op, nodes, perRound.size(),
                perRound.stream().mapToDouble(OpResult::opsPerSec).average().orElseThrow(),
                perRound.stream().mapToDouble(OpResult::mbPerSec).average().orElseThrow(), l.p50(), l.p99(),
                perRound.stream().mapToLong(OpResult::errors).sum(),
                perRound.stream().mapToLong(OpResult::wrongBytes).sum());
    }
}
