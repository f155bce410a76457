package io.kvtier.bench.cluster;

import io.kvtier.bench.compare.ServerProcess;
import io.kvtier.client.HostPort;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.IntFunction;
import java.util.stream.Collectors;

/**
 * kvtier node processes on 127.0.0.1 forming one cluster: RESP and cluster ports picked up front (the seeds name
 * every node, spares included), node {@code i} is {@code n<i>} with data in {@code <dir>/n<i>} and its log beside it.
 * Owns the processes: {@link #close} kills every one with SIGKILL, so no graceful shutdown writes anything a later
 * run could see. Thread-safe: the failover scenario kills and adds nodes while a poller reads {@link #nodes}.
 */
public final class LocalCluster implements AutoCloseable {
    static final Duration START_TIMEOUT = Duration.ofSeconds(120);
    static final Duration PROBE_TIMEOUT = Duration.ofSeconds(1);

    /** One started node. */
    public record Node(String id, HostPort endpoint, ServerProcess process) {
        public boolean isAlive() {
            return process.isAlive();
        }
    }

    private final NodeSettings settings;
    private final Path dir;
    private final String name;
    private final List<Integer> ports = new ArrayList<>();
    private final List<Integer> clusterPorts = new ArrayList<>();
    private final List<Node> nodes = new CopyOnWriteArrayList<>();
    private final IntFunction<List<String>> extraArgs;

    /** How many nodes the cluster started with: its Raft voters (--voters); nodes added later join as learners. */
    private int initial;

    private LocalCluster(NodeSettings settings, Path dir, String name, IntFunction<List<String>> extraArgs) {
        this.settings = settings;
        this.dir = dir;
        this.name = name;
        this.extraArgs = extraArgs;
    }

    /**
     * Starts {@code count} nodes at once (room for {@code spare} more to {@link #add} later) and waits until they
     * agree on one table with no import left.
     */
    static LocalCluster start(NodeSettings settings, Path dir, String name, int count, int spare)
            throws IOException, InterruptedException {
        return start(settings, dir, name, count, spare, i -> List.of());
    }

    /** As {@link #start(NodeSettings, Path, String, int, int)}, node {@code i} (from 0) also given {@code extraArgs(i)}. */
    public static LocalCluster start(NodeSettings settings, Path dir, String name, int count, int spare,
            IntFunction<List<String>> extraArgs) throws IOException, InterruptedException {
        LocalCluster c = new LocalCluster(settings, Files.createDirectories(dir), name, extraArgs);
        c.initial = count;
        try {
            for (int i = 0; i < count + spare; i++) {
                c.ports.add(ServerProcess.freePort());
                c.clusterPorts.add(ServerProcess.freePort());
            }
            List<CompletableFuture<Node>> starting = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                int k = i;
                // A thread each: a new cluster's node answers only once a majority of its voters is up, so they
                // cannot start one after the other (the common pool has one thread on two cores).
                starting.add(CompletableFuture.supplyAsync(() -> c.launchUnchecked(k),
                        r -> Thread.ofPlatform().daemon().start(r)));
            }
            IOException failed = null;
            for (CompletableFuture<Node> f : starting) { // every future, so a node that started is closed too
                try {
                    c.nodes.add(join(f));
                } catch (IOException e) {
                    failed = failed == null ? e : failed;
                }
            }
            if (failed != null) {
                throw failed;
            }
            c.awaitAgreement(count, START_TIMEOUT);
            return c;
        } catch (IOException | InterruptedException | RuntimeException e) {
            c.close();
            throw e;
        }
    }

    private static Node join(CompletableFuture<Node> f) throws IOException {
        try {
            return f.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            throw e;
        }
    }

    private Node launchUnchecked(int index) {
        try {
            return launch(index);
        } catch (IOException e) {
            throw new CompletionException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CompletionException(new IOException("interrupted while starting node n" + (index + 1), e));
        }
    }

    private Node launch(int index) throws IOException, InterruptedException {
        String id = "n" + (index + 1);
        int port = ports.get(index);
        String seeds = clusterPorts.stream().map(p -> "127.0.0.1:" + p).collect(Collectors.joining(","));
        List<String> command = new ArrayList<>(List.of(settings.launcher().toString(), "server", "--port",
                Integer.toString(port),
                "--dir", Files.createDirectories(dir.resolve(id)).toString(), "--memory",
                Long.toString(settings.memory()), "--disk", Long.toString(settings.disk()), "--node-id", id,
                "--seeds", seeds, "--cluster-port", Integer.toString(clusterPorts.get(index)), "--replicas",
                Integer.toString(settings.replicas()), "--failure-timeout", settings.failureTimeout().toMillis()
                        + "ms", "--cluster-name", name));
        command.addAll(extraArgs.apply(index));
        if (index < initial) {
            command.addAll(List.of("--voters", java.util.stream.IntStream.rangeClosed(1, initial)
                    .mapToObj(i -> "n" + i).collect(Collectors.joining(","))));
        }
        ServerProcess process = ServerProcess.start("kvtier " + id, command, port, dir.resolve(id + ".log"),
                START_TIMEOUT);
        return new Node(id, new HostPort("127.0.0.1", port), process);
    }

    /** Starts the next spare node; it joins the running cluster. Returns once it answers PING. */
    Node add() throws IOException, InterruptedException {
        int index = nodes.size();
        if (index >= ports.size()) {
            throw new IllegalStateException("no spare node left: the cluster was started with " + ports.size()
                    + " ports");
        }
        Node node = launch(index);
        nodes.add(node);
        return node;
    }

    /** Every node started so far, dead ones included, in start order. */
    public List<Node> nodes() {
        return List.copyOf(nodes);
    }

    public List<Node> live() {
        return nodes.stream().filter(Node::isAlive).toList();
    }

    Node first() {
        return nodes.getFirst();
    }

    /** Waits until every live node serves the same epoch over {@code members} members, none importing. */
    Duration awaitAgreement(int members, Duration timeout) throws IOException, InterruptedException {
        long start = System.nanoTime();
        String last = "no answer yet";
        while (System.nanoTime() - start < timeout.toNanos()) {
            try {
                List<ClusterInfo> infos = new ArrayList<>();
                for (Node n : live()) {
                    infos.add(InfoProbe.clusterInfo(n.endpoint().host(), n.endpoint().port(), PROBE_TIMEOUT));
                }
                if (agreed(infos, members)) {
                    return Duration.ofNanos(System.nanoTime() - start);
                }
                last = infos.stream().map(i -> "epoch " + i.epoch() + "/" + i.knownNodes() + " nodes/importing "
                        + i.importing()).toList().toString();
            } catch (IOException | IllegalStateException notYet) {
                last = notYet.getMessage();
            }
            Thread.sleep(100);
        }
        throw new IOException("the " + name + " nodes did not agree on " + members + " members within "
                + timeout.toSeconds() + " s; last: " + last + "; logs in " + dir);
    }

    static boolean agreed(List<ClusterInfo> infos, int members) {
        return !infos.isEmpty() && infos.stream().allMatch(i -> i.knownNodes() == members && i.serving()
                && i.importing() == 0 && !i.rebalancePending() && i.fenced() == 0)
                && infos.stream().map(ClusterInfo::epoch).distinct().count() == 1;
    }

    /** Empties every node (FLUSHALL through the first live node, which forwards it to the others). */
    void flushAll() throws IOException {
        live().getFirst().process().flushAll();
    }

    @Override
    public void close() {
        nodes.forEach(n -> n.process().kill());
    }
}
