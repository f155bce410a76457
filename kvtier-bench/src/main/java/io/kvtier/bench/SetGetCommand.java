package io.kvtier.bench;

import io.kvtier.bench.run.BenchOptions;
import io.kvtier.bench.workload.SetGetSpec;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code kvtier bench setget}: SET pass then GET pass over distinct keys, per value size. */
@Command(name = "setget", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"For each value size: a SET pass over distinct keys, then a GET pass over the keys it wrote.",
            "Example: kvtier bench setget --value-sizes 1m,4m -c 16 --duration 10s --verify"})
final class SetGetCommand extends WorkloadCommand {
    @Option(names = {"-s", "--value-sizes"}, paramLabel = "SIZES", split = ",", defaultValue = "256k,1m,4m,32m",
            converter = FlagValues.SizeConverter.class,
            description = "Value sizes, comma-separated, run in order (default: ${DEFAULT-VALUE}; at most 512m).")
    List<Long> valueSizes;

    @Option(names = "--key-space", paramLabel = "N", defaultValue = "0",
            description = "Distinct keys per size; a longer pass overwrites (default: ${DEFAULT-VALUE} = as many "
                    + "as 1 GiB holds, e.g. 1024 of 1 MiB).")
    long keySpace;

    @Mixin
    LimitFlags limit;

    @Override
    BenchOptions options() {
        BenchOptions.Builder builder = common(BenchOptions.builder(new SetGetSpec()))
                .valueSizes(sizes("--value-sizes", valueSizes)).keySpace(keySpace);
        limit.applyTo(builder);
        return builder.build();
    }
}
