package io.kvtier.cli.cluster;

import io.kvtier.common.Durations;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;

/**
 * {@code kvtier cluster status}: asks one node for KVT.STATUS and prints the cluster as that node sees it, as a
 * table or ({@code --json}) one JSON object; {@code --all} adds every member's own view. Exit code 1, with one line on
 * stderr, when the node cannot be reached, does not answer in time or is not a kvtier cluster node (an unreachable
 * other member under {@code --all} is reported in the output instead).
 */
@Command(name = "status", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Show a cluster's members, epoch, slot distribution, replication lag and rebalancing progress, "
                + "as one node reports them.")
final class ClusterStatusCommand implements Callable<Integer> {
    @Option(names = "--host", paramLabel = "HOST", defaultValue = "127.0.0.1",
            description = "Host of any node of the cluster (default: ${DEFAULT-VALUE}).")
    String host;

    @Option(names = {"-p", "--port"}, paramLabel = "PORT", defaultValue = "6379",
            description = "Its RESP port (default: ${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--password", paramLabel = "PASS", description = "Sent with AUTH first (default: none).")
    String password;

    @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "2s", converter = DurationConverter.class,
            description = "Limit on connecting and on each reply (default: ${DEFAULT-VALUE}).")
    Duration timeout;

    @Option(names = "--all", description = "Also ask every other member (at the endpoint it advertises) for its own "
            + "epoch, lag and rebalancing progress.")
    boolean all;

    @Option(names = "--json", description = "Print one JSON object instead of the table.")
    boolean json;

    @Override
    public Integer call() {
        String target = host + ":" + port;
        try (NodeQuery query = new NodeQuery(password, timeout)) {
            ClusterInfo info;
            try {
                info = ClusterInfo.parse(query.clusterInfo(host, port));
            } catch (IOException | IllegalArgumentException e) {
                System.err.println("kvtier: " + (e instanceof IllegalArgumentException ? target + " is " : "")
                        + e.getMessage());
                return 1;
            }
            List<NodeQuery.NodeReport> others = all ? query.others(info) : List.of();
            System.out.print(json ? StatusJson.format(info, target, others) + "\n"
                    : StatusTable.format(info, target, others));
            System.out.flush();
            return 0;
        }
    }

    /** A positive duration in {@link Durations}' grammar ("500ms", "2s"; a bare number is seconds). */
    static final class DurationConverter implements ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            Duration d;
            try {
                d = Durations.parse(value);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--timeout: " + e.getMessage());
            }
            if (d.isZero()) {
                throw new IllegalArgumentException("--timeout: '" + value + "' must be more than 0");
            }
            return d;
        }
    }
}
