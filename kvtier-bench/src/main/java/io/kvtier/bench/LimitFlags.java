package io.kvtier.bench;

import io.kvtier.bench.load.Limit;
import io.kvtier.bench.run.BenchOptions;
import io.kvtier.bench.workload.Bounds;
import java.time.Duration;
import picocli.CommandLine.Option;

/** {@code --duration} or {@code --requests}: how long each measured pass runs. Filled by picocli. */
final class LimitFlags {
    // No -d: redis-benchmark's -d is the value size, and muscle memory should not turn into a 12-day run.
    @Option(names = "--duration", paramLabel = "DURATION", converter = FlagValues.DurationConverter.class,
            description = "Length of each measured pass, e.g. 500ms, 10s, 2m (default: 10s unless --requests).")
    Duration duration;

    @Option(names = {"-n", "--requests"}, paramLabel = "N",
            description = "Requests in each measured pass, instead of a duration (default: none, --duration).")
    Long requests;

    void applyTo(BenchOptions.Builder builder) {
        if (duration != null && requests != null) {
            throw new IllegalArgumentException("--duration " + new Limit.Timed(duration) + " and --requests "
                    + requests + " exclude each other; give one");
        }
        if (requests != null) {
            builder.limit(new Limit.Requests(Bounds.check("--requests", requests, 1, Long.MAX_VALUE)));
        } else if (duration != null) {
            builder.limit(new Limit.Timed(duration));
        }
    }
}
