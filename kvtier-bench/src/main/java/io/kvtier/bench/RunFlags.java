package io.kvtier.bench;

import io.kvtier.bench.load.Limit;
import io.kvtier.bench.run.BenchOptions;
import java.nio.file.Path;
import java.util.OptionalDouble;
import picocli.CommandLine.Option;

/** The flags of how a run is made and reported, common to every workload. Filled by picocli. */
final class RunFlags {
    @Option(names = "--warmup", paramLabel = "DURATION|N", defaultValue = "2s",
            converter = FlagValues.WarmUpConverter.class,
            description = "Untimed warm-up before measuring: a duration (2s) or a request count (200); 0 = none. "
                    + "SET/GET of 16 keys of the first size, deleted afterwards (default: ${DEFAULT-VALUE}).")
    Limit warmUp;

    @Option(names = "--rate", paramLabel = "OPS",
            description = "Open loop: requests per second on a fixed schedule, latency measured from each "
                    + "request's intended send time (default: none, closed loop: latencies are service times).")
    Double rate;

    @Option(names = "--verify", defaultValue = "false",
            description = "Write self-describing values and check every byte of every GET reply; wrong bytes "
                    + "fail the run (default: ${DEFAULT-VALUE}: one shared buffer per size, lengths checked).")
    boolean verify;

    @Option(names = "--seed", paramLabel = "N", defaultValue = "1",
            description = "Seed of every pseudo-random choice: payloads, Zipf draws, read order "
                    + "(default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--key-prefix", paramLabel = "PREFIX", defaultValue = BenchOptions.Builder.DEFAULT_KEY_PREFIX,
            description = "Prefix of the harness's own keys (setget, overflow, warm-up; LMCache keys are "
                    + "LMCache's) (default: ${DEFAULT-VALUE}).")
    String keyPrefix;

    @Option(names = {"-o", "--out"}, paramLabel = "DIR", defaultValue = BenchOptions.Builder.DEFAULT_OUTPUT_DIR,
            description = "Directory for <workload>.json and <workload>.csv, overwritten (default: ${DEFAULT-VALUE}).")
    Path outputDir;

    void applyTo(BenchOptions.Builder builder) {
        builder.warmUp(warmUp).rate(rate == null ? OptionalDouble.empty() : OptionalDouble.of(rate)).verify(verify)
                .seed(seed).keyPrefix(keyPrefix).outputDir(outputDir);
    }
}
