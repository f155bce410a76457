package io.kvtier.cli.cluster;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Spec;

/** {@code kvtier cluster}: the group of commands that inspect a running cluster; alone, it prints its usage. */
@Command(name = "cluster", mixinStandardHelpOptions = true, description = "Inspect a running kvtier cluster.",
        subcommands = {ClusterStatusCommand.class})
public final class ClusterCommand implements Runnable {
    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }
}
