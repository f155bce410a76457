package io.kvtier.bench;

import io.kvtier.bench.report.BenchResult;
import io.kvtier.bench.report.ProgressBar;
import io.kvtier.bench.report.ProgressListener;
import io.kvtier.bench.run.BenchOptions;
import io.kvtier.bench.run.BenchRun;
import io.kvtier.bench.workload.Bounds;
import java.io.Console;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Mixin;

/**
 * What every workload subcommand does: map its flags to {@link BenchOptions}, run, and answer exit code 0, or 1
 * when any operation saw an error or wrong bytes. Bad flag values throw IllegalArgumentException (kvtier's main
 * maps it to exit code 2); an unreachable endpoint throws IOException. Runs on the calling thread.
 */
abstract class WorkloadCommand implements Callable<Integer> {
    @Mixin
    TargetFlags target;

    @Mixin
    RunFlags run;

    /** The options of this workload, validated. */
    abstract BenchOptions options();

    @Override
    public Integer call() throws Exception {
        BenchResult result = BenchRun.execute(options(), System.out, progress());
        return result.failed() ? 1 : 0;
    }

    /** A progress bar on stderr only on a terminal, so redirected output stays clean. */
    private static ProgressListener progress() {
        Console console = System.console();
        return console != null && console.isTerminal() ? new ProgressBar(System.err) : ProgressListener.NONE;
    }

    BenchOptions.Builder common(BenchOptions.Builder builder) {
        target.applyTo(builder);
        run.applyTo(builder);
        return builder;
    }

    /** Narrows parsed sizes to ints after checking them, so {@code 4g} is reported, not wrapped. */
    static List<Integer> sizes(String flag, List<Long> sizes) {
        return sizes.stream().map(s -> (int) Bounds.checkBytes(flag, s, 1, BenchOptions.MAX_VALUE_SIZE)).toList();
    }
}
