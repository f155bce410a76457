package io.kvtier.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** Entry point of {@code kvtier}: dispatches to subcommands and maps bad input to exit code 2 with one clear line. */
@Command(name = "kvtier", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Tiered key-value store for LLM KV-cache offload, speaking the Redis protocol.",
        subcommands = {ServerCommand.class, io.kvtier.cli.cluster.ClusterCommand.class,
                io.kvtier.bench.BenchCommand.class, io.kvtier.cli.sizing.SizeCommand.class,
                io.kvtier.cli.simulate.SimulateCommand.class, io.kvtier.cli.router.EngineSimCommand.class,
                io.kvtier.cli.router.RouterCommand.class, io.kvtier.cli.router.MapCommand.class})
public final class Main implements Runnable {
    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** The command line with kvtier's error handling: bad input is exit code 2 and one line on stderr. */
    public static CommandLine commandLine() {
        CommandLine cli = new CommandLine(new Main());
        cli.setParameterExceptionHandler((e, a) -> {
            System.err.println("kvtier: " + e.getMessage());
            e.getCommandLine().usage(System.err);
            return 2;
        });
        cli.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            if (e instanceof IllegalArgumentException) {
                System.err.println("kvtier: " + e.getMessage());
                return 2;
            }
            System.err.println("kvtier: " + (e instanceof java.io.IOException ? e.getMessage() : e.toString()));
            return 1;
        });
        return cli;
    }

    @Override
    public void run() {
        new CommandLine(this).usage(System.out);
    }

    /** Reports the version from the jar manifest. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = Main.class.getPackage().getImplementationVersion();
            return new String[] {"kvtier " + (v == null ? "dev" : v)};
        }
    }
}
