package io.kvtier.bench;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code kvtier bench}: the load generator's command line. Each workload is a subcommand; each prints a table on
 * stdout, writes {@code <out>/<workload>.json} and {@code .csv}, and exits 0, or 1 when any operation saw an error
 * or wrong bytes. Register it as a subcommand of kvtier's main command; it holds no state.
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = {"Benchmark a RESP endpoint (kvtier, Redis, ...) with KV-cache workloads.",
            "Latency is measured per command from send start to the last reply byte into HdrHistograms; without "
                    + "--rate the loop is closed (service times), with --rate it is open (from the intended send "
                    + "time, so stalls are charged)."},
        subcommands = {SetGetCommand.class, LmcacheCommand.class, OverflowCommand.class, CompareCommand.class,
            ClusterCommand.class, FleetCommand.class, LocalCommand.class})
public final class BenchCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** For running the harness on its own: {@code java -cp ... io.kvtier.bench.BenchCommand setget --help}. */
    public static void main(String[] args) {
        System.exit(new CommandLine(new BenchCommand()).execute(args));
    }
}
