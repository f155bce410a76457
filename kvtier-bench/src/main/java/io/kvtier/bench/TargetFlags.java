package io.kvtier.bench;

import io.kvtier.bench.run.BenchOptions;
import io.kvtier.bench.run.BenchTls;
import java.time.Duration;
import picocli.CommandLine.Option;

/** The flags naming the endpoint and the shape of the load, common to every workload. Filled by picocli. */
final class TargetFlags {
    @Option(names = "--host", paramLabel = "HOST", defaultValue = BenchOptions.Builder.DEFAULT_HOST,
            description = "Host of the RESP endpoint: kvtier, Redis or anything speaking RESP "
                    + "(default: ${DEFAULT-VALUE}).")
    String host;

    @Option(names = {"-p", "--port"}, paramLabel = "PORT", defaultValue = "6379",
            description = "Port of the RESP endpoint (default: ${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--password", paramLabel = "PASS",
            description = "Password sent with AUTH on every connection (default: none, no AUTH).")
    String password;

    @Option(names = "--cluster", defaultValue = "false",
            description = "The endpoint is a node of a cluster (kvtier or Redis Cluster): read CLUSTER SLOTS from it,"
                    + " connect to every primary and send each command to its key's primary; follow -MOVED, refresh"
                    + " the slot map when a node dies or joins. -TRYAGAIN, -CLUSTERDOWN and unreachable nodes count as"
                    + " errors and the run goes on (default: ${DEFAULT-VALUE}).")
    boolean cluster;

    @Option(names = {"-c", "--connections"}, paramLabel = "N", defaultValue = "4",
            description = "Connections to open (default: ${DEFAULT-VALUE}; at most 1024). With --cluster, N in all,"
                    + " spread over the primaries (16 over 3 nodes: 6+5+5; a node that joins later gets N/nodes); each"
                    + " of the N x --pipeline lanes sends to whichever node owns its key.")
    int connections;

    @Option(names = {"-P", "--pipeline"}, paramLabel = "N", defaultValue = "1",
            description = "Requests each connection keeps in flight (default: ${DEFAULT-VALUE}; at most 1024).")
    int pipeline;

    @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "60s",
            converter = FlagValues.DurationConverter.class,
            description = "Per-command timeout; a timeout counts as an error (default: ${DEFAULT-VALUE}).")
    Duration timeout;

    @Option(names = "--tls", defaultValue = "false",
            description = "Connect over TLS, as redis-cli --tls (default: ${DEFAULT-VALUE}).")
    boolean tls;

    @Option(names = "--cacert", paramLabel = "FILE",
            description = "With --tls: CA certificate (PEM) the server's certificate is verified against (default: the"
                    + " JDK's trusted CAs).")
    java.nio.file.Path caCert;

    @Option(names = "--cert", paramLabel = "FILE", description = "With --tls: client certificate (PEM) (default: none, no client certificate).")
    java.nio.file.Path cert;

    @Option(names = "--key", paramLabel = "FILE", description = "With --tls: the client certificate's key (PEM, PKCS#8) (default: none).")
    java.nio.file.Path key;

    void applyTo(BenchOptions.Builder builder) {
        if (!tls && (caCert != null || cert != null || key != null)) {
            throw new IllegalArgumentException("--cacert, --cert and --key need --tls");
        }
        builder.host(host).port(port).cluster(cluster).password(password).connections(connections).pipeline(pipeline)
                .timeout(timeout).tls(tls ? java.util.Optional.of(new BenchTls(java.util.Optional.ofNullable(caCert),
                        java.util.Optional.ofNullable(cert), java.util.Optional.ofNullable(key)))
                        : java.util.Optional.empty());
    }
}
