package io.kvtier.bench.fleet;

import io.kvtier.bench.cluster.LocalCluster;
import io.kvtier.bench.cluster.NodeSettings;
import io.kvtier.bench.compare.ServerProcess;
import io.kvtier.client.ClientOptions;
import io.kvtier.client.ClientResources;
import io.kvtier.client.HostPort;
import io.kvtier.client.Reply;
import io.kvtier.client.RespConnection;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The kvtier the engines of a fleet point offload to: one {@code kvtier server} process (what LMCache's
 * {@code redis://} reaches) or a cluster of them with one backup per slot (its {@code redis-cluster://}), every node
 * publishing its store events for the router. Read between points for the chunk reads each tier served (INFO's
 * per-model {@code hits_memory} and {@code hits_disk}); one node can be killed mid-point. Owns the processes: {@link
 * #close} kills them all (nothing of a point is kept for the next).
 */
final class KvtierStore implements AutoCloseable {
    private static final Pattern MODEL_LINE = Pattern.compile("hits_memory=(\\d+),hits_disk=(\\d+)");
    private static final Duration START_TIMEOUT = Duration.ofSeconds(120);
    private static final Duration INFO_TIMEOUT = Duration.ofSeconds(5);

    /** One node: its process and the port of its store events (replays on the port above). */
    private record Member(String name, ServerProcess process, int eventsPort) {
    }

    /** Chunk reads served by each tier. */
    record Hits(long memory, long disk) {
        static final Hits NONE = new Hits(0, 0);

        Hits minus(Hits o) {
            return new Hits(memory - o.memory, disk - o.disk);
        }

        Hits plus(Hits o) {
            return new Hits(memory + o.memory, disk + o.disk);
        }
    }

    /** Each node's chunk reads at one moment, in node order; null for a node that did not answer. */
    record HitsByNode(List<Hits> nodes) {
        /** Chunk reads since {@code before}, summed over the nodes that answered both times. */
        Hits since(HitsByNode before) {
            Hits sum = Hits.NONE;
            for (int i = 0; i < nodes.size(); i++) {
                if (nodes.get(i) != null && before.nodes.get(i) != null) {
                    sum = sum.plus(nodes.get(i).minus(before.nodes.get(i)));
                }
            }
            return sum;
        }
    }

    private final List<Member> members;
    private final LocalCluster cluster;

    private KvtierStore(List<Member> members, LocalCluster cluster) {
        this.members = List.copyOf(members);
        this.cluster = cluster;
    }

    /**
     * Starts {@code nodes} nodes, each with {@code memoryBytes} of memory and {@code diskBytes} of disk, data and logs
     * under {@code dir}: one plain node for 1, else a cluster of that many with {@code --replicas 1} and the given
     * failure timeout. Returns once the node answers PING, or the cluster's nodes agree on one table.
     */
    static KvtierStore start(Path launcher, Path dir, int nodes, long memoryBytes, long diskBytes,
            Duration failureTimeout) throws IOException, InterruptedException {
        return start(launcher, dir, nodes, memoryBytes, diskBytes, failureTimeout, false);
    }

    /** As above; with {@code sharedMemory} the node runs with --shm yes (one node only). */
    static KvtierStore start(Path launcher, Path dir, int nodes, long memoryBytes, long diskBytes,
            Duration failureTimeout, boolean sharedMemory) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        if (sharedMemory && nodes != 1) {
            throw new IllegalArgumentException("shared memory (dram-shm) needs one kvtier node, not " + nodes);
        }
        if (nodes == 1) {
            int port = ServerProcess.freePort();
            int events = ServerProcess.freePair(); // --kv-events binds it and the next
            List<String> command = new ArrayList<>(List.of(launcher.toString(), "server", "--port",
                    Integer.toString(port), "--dir", dir.toString(), "--memory", Long.toString(memoryBytes), "--disk",
                    Long.toString(diskBytes), "--kv-events", Integer.toString(events)));
            if (sharedMemory) {
                command.addAll(List.of("--shm", "yes"));
            }
            ServerProcess p = ServerProcess.start("kvtier", command, port, dir.resolve("kvtier.log"), START_TIMEOUT);
            return new KvtierStore(List.of(new Member("kvtier", p, events)), null);
        }
        int[] events = new int[nodes];
        for (int i = 0; i < nodes; i++) {
            events[i] = ServerProcess.freePair();
        }
        LocalCluster c = LocalCluster.start(new NodeSettings(launcher, memoryBytes, diskBytes, 1, failureTimeout),
                dir, "kvtier-fleet", nodes, 0, i -> List.of("--kv-events", Integer.toString(events[i])));
        List<Member> members = new ArrayList<>();
        for (int i = 0; i < nodes; i++) {
            LocalCluster.Node n = c.nodes().get(i);
            members.add(new Member(n.id(), n.process(), events[i]));
        }
        return new KvtierStore(members, c);
    }

    /** A cluster (route by slot), not one node. */
    boolean isCluster() {
        return cluster != null;
    }

    /** Where the engines connect: the node, or the cluster's first node (they learn the others from it). */
    HostPort seed() {
        return new HostPort("127.0.0.1", members.getFirst().process().port());
    }

    /** Each node as the router's {@code --kvtier} takes it: {@code HOST:PORT,events=tcp://HOST:PORT}. */
    List<String> routerAddresses() {
        return members.stream().map(m -> "127.0.0.1:" + m.process().port() + ",events=tcp://127.0.0.1:"
                + m.eventsPort()).toList();
    }

    int size() {
        return members.size();
    }

    boolean allAlive() {
        return members.stream().allMatch(m -> m.process().isAlive());
    }

    /** SIGKILL of the last node (in a cluster its backups take over its slots); returns its name. */
    String killOne() {
        Member m = members.getLast();
        m.process().kill();
        return m.name();
    }

    /** Every node's chunk reads by tier so far (null for a node that is dead or does not answer). */
    HitsByNode hits() {
        List<Hits> hits = new ArrayList<>();
        for (Member m : members) {
            hits.add(m.process().isAlive() ? hitsOf(m.process().port()) : null);
        }
        return new HitsByNode(hits);
    }

    private static Hits hitsOf(int port) {
        try (ClientResources resources = ClientResources.create(1)) {
            RespConnection c = RespConnection.connect(resources, "127.0.0.1", port,
                    new ClientOptions(INFO_TIMEOUT, INFO_TIMEOUT)).get(INFO_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            try {
                Reply r = c.send("INFO").get(INFO_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                String text = r instanceof Reply.Bulk b ? b.utf8() : "";
                Reply.release(r);
                long memory = 0;
                long disk = 0;
                Matcher m = MODEL_LINE.matcher(text);
                while (m.find()) {
                    memory += Long.parseLong(m.group(1));
                    disk += Long.parseLong(m.group(2));
                }
                return new Hits(memory, disk);
            } finally {
                c.close();
            }
        } catch (Exception e) {
            return null;
        }
    }

    @Override
    public void close() {
        if (cluster != null) {
            cluster.close();
        } else {
            members.forEach(m -> m.process().kill());
        }
    }
}
