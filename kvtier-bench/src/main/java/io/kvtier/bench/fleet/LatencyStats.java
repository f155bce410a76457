package io.kvtier.bench.fleet;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * What the clients measured at one point, over the requests that completed in it. Times are in seconds;
 * percentiles interpolate linearly between the two nearest ranks, as numpy's default does (and so vLLM's
 * {@code benchmark_serving}, whose numbers these are compared with); NaN where nothing was measured. TPOT and the
 * per-user speed come from requests with at least two output tokens. Immutable.
 *
 * @param ok                           requests that completed without error
 * @param errors                       requests that failed
 * @param firstErrors                  the first distinct error messages, at most {@value #MAX_ERRORS}
 * @param ttftP50                      time to first token, median
 * @param tpotP50                      time per output token after the first, median
 * @param tokensPerSecondPerUser       mean over requests of 1 / TPOT: the decode speed one user sees
 * @param tokensPerSecondPerUserMedian the median of the same
 * @param e2eP50                       sent to last byte, median
 * @param promptTokens                 prompt tokens of the completed requests (as the engines counted them)
 * @param cachedTokens                 of those, what the engines reported cached ({@code cached_tokens})
 * @param outputTokens                 output tokens of the completed requests
 * @param measuredSeconds              the length of the point, the denominator of the rates
 */
public record LatencyStats(long ok, long errors, List<String> firstErrors,
                           double ttftP50, double ttftP90, double ttftP99, double ttftMean,
                           double tpotP50, double tpotP90, double tpotMean,
                           double tokensPerSecondPerUser, double tokensPerSecondPerUserMedian,
                           double e2eP50, double e2eP90,
                           long promptTokens, long cachedTokens, long outputTokens, double measuredSeconds) {
    public static final int MAX_ERRORS = 5;

    public LatencyStats {
        firstErrors = List.copyOf(Objects.requireNonNull(firstErrors, "firstErrors"));
    }

    /**
     * The statistics of {@code results} (ok and failed) over a point of {@code measuredSeconds}.
     *
     * @throws IllegalArgumentException when {@code measuredSeconds} is negative or not a number
     */
    public static LatencyStats of(List<RequestResult> results, double measuredSeconds) {
        Objects.requireNonNull(results, "results");
        if (!(measuredSeconds >= 0) || Double.isInfinite(measuredSeconds)) {
            throw new IllegalArgumentException("measured seconds " + measuredSeconds + " must be finite and >= 0");
        }
        List<RequestResult> ok = new ArrayList<>(results.size());
        Set<String> errors = new LinkedHashSet<>();
        long failed = 0;
        for (RequestResult r : results) {
            if (r.ok()) {
                ok.add(r);
            } else {
                failed++;
                if (errors.size() < MAX_ERRORS) {
                    errors.add(r.error());
                }
            }
        }
        double[] ttft = sorted(ok.stream().mapToDouble(RequestResult::ttftSeconds).toArray());
        double[] tpot = sorted(ok.stream().mapToDouble(RequestResult::tpotSeconds).filter(t -> t > 0).toArray());
        double[] speed = sorted(Arrays.stream(tpot).map(t -> 1 / t).toArray());
        double[] e2e = sorted(ok.stream().mapToDouble(r -> (r.endNanos() - r.sentNanos()) / 1e9).toArray());
        return new LatencyStats(ok.size(), failed, List.copyOf(errors),
                percentile(ttft, 50), percentile(ttft, 90), percentile(ttft, 99), mean(ttft),
                percentile(tpot, 50), percentile(tpot, 90), mean(tpot),
                mean(speed), percentile(speed, 50),
                percentile(e2e, 50), percentile(e2e, 90),
                ok.stream().mapToLong(RequestResult::promptTokens).sum(),
                ok.stream().mapToLong(RequestResult::cachedTokens).sum(),
                ok.stream().mapToLong(RequestResult::completionTokens).sum(), measuredSeconds);
    }

    /** Completed requests per second over the point; 0 for a point of no length. */
    public double requestsPerSecond() {
        return rate(ok);
    }

    /** Output tokens of completed requests per second, over the whole fleet. */
    public double outputTokensPerSecond() {
        return rate(outputTokens);
    }

    /** Failed requests over all requests; 0 when there were none. */
    public double errorRate() {
        return ok + errors == 0 ? 0 : (double) errors / (ok + errors);
    }

    private double rate(long count) {
        return measuredSeconds > 0 ? count / measuredSeconds : 0;
    }

    private static double[] sorted(double[] values) {
        Arrays.sort(values);
        return values;
    }

    /** The {@code p}th percentile of sorted {@code values}, interpolated linearly (numpy's default); NaN if none. */
    static double percentile(double[] sorted, double p) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        double rank = p / 100 * (sorted.length - 1);
        int below = (int) Math.floor(rank);
        int above = Math.min(below + 1, sorted.length - 1);
        return sorted[below] + (rank - below) * (sorted[above] - sorted[below]);
    }

    private static double mean(double[] values) {
        return values.length == 0 ? Double.NaN : Arrays.stream(values).sum() / values.length;
    }
}
