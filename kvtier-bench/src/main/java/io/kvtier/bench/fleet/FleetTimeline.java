package io.kvtier.bench.fleet;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A point's requests over time, warm-up included: in buckets by the time each request was sent (seconds from the
 * point's start), how many completed and failed, their TTFT p50/p90/max and the share of their prompt tokens the
 * engines did not prefill ({@code cached_tokens}); and when a kvtier node was killed, if one was. It shows what a
 * single number per point hides: the fleet's TTFT and hit rate around a kill. Immutable.
 *
 * @param bucketSeconds  width of a bucket
 * @param buckets        from the point's start, in order; a bucket with no completed request has NaN latencies
 * @param killedAtSeconds when the node was killed, seconds from the start; NaN when none was
 * @param killed         which node was killed, or null
 */
public record FleetTimeline(double bucketSeconds, List<Bucket> buckets, double killedAtSeconds, String killed) {
    /** The requests sent within one bucket. NaN latencies and share when none completed. */
    public record Bucket(double startSeconds, int ok, int errors, double ttftP50, double ttftP90, double ttftMax,
                         double cachedShare) {
    }

    public FleetTimeline {
        buckets = List.copyOf(Objects.requireNonNull(buckets, "buckets"));
        if (!(bucketSeconds > 0)) {
            throw new IllegalArgumentException("bucket width " + bucketSeconds + " must be positive");
        }
    }

    /** No requests, no kill. */
    public static final FleetTimeline EMPTY = new FleetTimeline(1, List.of(), Double.NaN, null);

    /**
     * The timeline of {@code results} (every request of the point, ok or not) over {@code seconds} from
     * {@code startNanos}, in buckets of {@code bucketSeconds}; requests sent after the end are left out.
     */
    public static FleetTimeline of(List<RequestResult> results, long startNanos, double seconds, double bucketSeconds,
            double killedAtSeconds, String killed) {
        int n = Math.max(1, (int) Math.ceil(seconds / bucketSeconds));
        List<List<RequestResult>> byBucket = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            byBucket.add(new ArrayList<>());
        }
        for (RequestResult r : results) {
            double at = (r.sentNanos() - startNanos) / 1e9;
            int i = (int) Math.floor(at / bucketSeconds);
            if (i >= 0 && i < n) {
                byBucket.get(i).add(r);
            }
        }
        List<Bucket> buckets = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            List<RequestResult> in = byBucket.get(i);
            double[] ttft = in.stream().filter(RequestResult::ok).mapToDouble(RequestResult::ttftSeconds).sorted()
                    .toArray();
            long prompt = in.stream().filter(RequestResult::ok).mapToLong(RequestResult::promptTokens).sum();
            long cached = in.stream().filter(RequestResult::ok).mapToLong(RequestResult::cachedTokens).sum();
            buckets.add(new Bucket(i * bucketSeconds, ttft.length, in.size() - ttft.length,
                    LatencyStats.percentile(ttft, 50), LatencyStats.percentile(ttft, 90),
                    ttft.length == 0 ? Double.NaN : ttft[ttft.length - 1],
                    prompt == 0 ? Double.NaN : (double) cached / prompt));
        }
        return new FleetTimeline(bucketSeconds, buckets, killedAtSeconds, killed);
    }

    /** Whether a node was killed during the point. */
    public boolean hasKill() {
        return killed != null;
    }

    /** Each bucket's start, for a chart's x axis. */
    public double[] seconds() {
        return buckets.stream().mapToDouble(Bucket::startSeconds).toArray();
    }

    /** The largest TTFT p90 of a bucket that ended by {@code seconds}; NaN when none completed there. */
    public double worstP90Before(double seconds) {
        return worstP90(b -> b.startSeconds() + bucketSeconds <= seconds);
    }

    /** The largest TTFT p90 of a bucket that ended after {@code seconds} (its own bucket included). */
    public double worstP90After(double seconds) {
        return worstP90(b -> b.startSeconds() + bucketSeconds > seconds);
    }

    private double worstP90(java.util.function.Predicate<Bucket> which) {
        return buckets.stream().filter(which).mapToDouble(Bucket::ttftP90).filter(Double::isFinite).max()
                .orElse(Double.NaN);
    }
}
