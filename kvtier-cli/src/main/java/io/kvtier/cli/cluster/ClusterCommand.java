package io.kvtier.cli.cluster;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Spec;

/**
 * {@code kvtier cluster}: the group of commands that inspect a running cluster and change its membership; alone, it
 * prints its usage.
 */
@Command(name = "cluster", mixinStandardHelpOptions = true,
        description = "Inspect a running kvtier cluster, and change who is in it.",
        subcommands = {ClusterStatusCommand.class, MembershipCommands.Leave.class, MembershipCommands.Drain.class,
            MembershipCommands.Forget.class, MembershipCommands.Replace.class, MembershipCommands.AcceptLoss.class})
public final class ClusterCommand implements Runnable {
    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }
}
