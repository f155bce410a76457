package io.kvtier.bench;

import io.kvtier.bench.load.Limit;
import io.kvtier.bench.run.BenchOptions;
import io.kvtier.bench.workload.OverflowSpec;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code kvtier bench overflow}: a working set k times the server's memory, written then read back. */
@Command(name = "overflow", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Write a working set of --factor x --memory-budget bytes as distinct values, then read all "
                + "of them back in random order; reports the hit rate and read GB/s. Give the server's real memory "
                + "budget (kvtier --memory, Redis --maxmemory).",
            "Example: kvtier bench overflow --memory-budget 1g --factor 4"})
final class OverflowCommand extends WorkloadCommand {
    @Option(names = "--memory-budget", paramLabel = "SIZE", required = true,
            converter = FlagValues.SizeConverter.class,
            description = "The server's memory budget, e.g. 1g (required; no default).")
    long memoryBudget;

    @Option(names = {"-k", "--factor"}, paramLabel = "K", defaultValue = "4",
            description = "Working set / memory budget (default: ${DEFAULT-VALUE}).")
    double factor;

    @Option(names = {"-s", "--value-size"}, paramLabel = "SIZE", defaultValue = "1m",
            converter = FlagValues.SizeConverter.class,
            description = "Size of each value (default: ${DEFAULT-VALUE}; at most 512m).")
    long valueSize;

    @Override
    BenchOptions options() {
        OverflowSpec spec = new OverflowSpec(memoryBudget, factor);
        List<Integer> size = sizes("--value-size", List.of(valueSize));
        return common(BenchOptions.builder(spec)).valueSizes(size)
                .limit(new Limit.Requests(spec.keys(size.getFirst()))).build();
    }
}
