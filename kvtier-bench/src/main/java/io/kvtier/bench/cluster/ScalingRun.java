package io.kvtier.bench.cluster;

import io.kvtier.bench.compare.Cleanup;
import io.kvtier.bench.load.Limit;
import io.kvtier.bench.report.BenchResult;
import io.kvtier.bench.report.OpResult;
import io.kvtier.bench.report.ProgressListener;
import io.kvtier.bench.run.BenchOptions;
import io.kvtier.bench.run.BenchRun;
import io.kvtier.bench.workload.SetGetSpec;
import io.kvtier.common.Units;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The scaling comparison: a 1-node cluster and a {@code nodes}-node cluster (both started with {@code --seeds}, so
 * both route through the cluster code), each warmed up untimed, then {@code setget --cluster} against each in turn,
 * round after round (A B A B), each pass on emptied nodes with the same seed, value size, key space and
 * {@code -c}. Both clusters run for the whole comparison; the one not measured is idle. Runs on the calling thread.
 */
final class ScalingRun {
    private static final Duration MAX_WARM_UP = Duration.ofSeconds(1);

    private final ClusterBenchOptions o;
    private final Path scratch;
    private final PrintStream out;
    private final List<ScalingPass> passes = new ArrayList<>();

    private ScalingRun(ClusterBenchOptions o, Path scratch, PrintStream out) {
        this.o = o;
        this.scratch = scratch;
        this.out = out;
    }

    static List<ScalingPass> execute(ClusterBenchOptions o, Path scratch, PrintStream out, Cleanup<LocalCluster> cleanup)
            throws IOException, InterruptedException {
        return new ScalingRun(o, scratch, out).run(cleanup);
    }

    private List<ScalingPass> run(Cleanup<LocalCluster> cleanup) throws IOException, InterruptedException {
        out.printf("scaling: starting a 1-node and a %d-node cluster (--replicas %d; --memory %s each) ...%n",
                o.nodes(), o.node().replicas(), Units.bytes(o.node().memory()));
        // Started together (a node's start is mostly waiting: JGroups discovery, merge rounds), measured apart. A
        // cluster that starts while the other failed is in the cleanup's hands.
        CompletableFuture<LocalCluster> oneStarting = CompletableFuture.supplyAsync(() -> start(cleanup, 1));
        CompletableFuture<LocalCluster> manyStarting = CompletableFuture.supplyAsync(() -> start(cleanup, o.nodes()));
        try (LocalCluster one = join(oneStarting); LocalCluster many = join(manyStarting)) {
            warmUp(List.of(one, many));
            for (int round = 1; round <= o.rounds(); round++) {
                for (LocalCluster cluster : List.of(one, many)) {
                    measure(cluster, round);
                }
            }
            return List.copyOf(passes);
        }
    }

    private LocalCluster start(Cleanup<LocalCluster> cleanup, int nodes) {
        try {
            return cleanup.add(LocalCluster.start(o.node(), scratch.resolve("scaling-" + nodes),
                    "kvtier-bench-" + nodes + "node" + (nodes == 1 ? "" : "s"), nodes, 0));
        } catch (IOException e) {
            throw new CompletionException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CompletionException(new IOException("interrupted while starting the clusters", e));
        }
    }

    private static LocalCluster join(CompletableFuture<LocalCluster> starting) throws IOException {
        try {
            return starting.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            throw e;
        }
    }

    private void warmUp(List<LocalCluster> clusters) throws IOException {
        if (o.serverWarmUp().isZero()) {
            return;
        }
        out.printf(Locale.ROOT, "scaling: warming up both clusters (%.1f s each, not measured) ...%n",
                o.serverWarmUp().toMillis() / 1000.0);
        for (LocalCluster cluster : clusters) {
            cluster.flushAll();
            BenchRun.measure(setGet(cluster).warmUp(Limit.none())
                    .limit(new Limit.Timed(o.serverWarmUp().dividedBy(2))).build(), ProgressListener.NONE);
        }
    }

    private void measure(LocalCluster cluster, int round) throws IOException {
        cluster.flushAll();
        int nodes = cluster.nodes().size();
        BenchResult result = BenchRun.measure(setGet(cluster).build(), ProgressListener.NONE);
        passes.add(new ScalingPass(nodes, round, result));
        StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "scaling: pass %d: %d node%s, round %d:",
                passes.size(), nodes, nodes == 1 ? "" : "s", round));
        for (OpResult r : result.results()) {
            line.append(String.format(Locale.ROOT, " %s %.0f ops/s %.0f MB/s", r.op(), r.opsPerSec(), r.mbPerSec()));
            if (r.errors() > 0) {
                line.append(" (").append(r.errors()).append(" errors: ").append(r.firstError()).append(')');
            }
        }
        out.println(line);
    }

    private BenchOptions.Builder setGet(LocalCluster cluster) {
        Duration warmUp = o.duration().compareTo(MAX_WARM_UP) < 0 ? o.duration() : MAX_WARM_UP;
        return BenchOptions.builder(new SetGetSpec()).host(cluster.first().endpoint().host())
                .port(cluster.first().endpoint().port()).cluster(true).connections(o.connections())
                .valueSizes(List.of(o.valueSize())).keySpace(o.scalingKeys()).verify(o.verify()).seed(o.seed())
                .warmUp(new Limit.Timed(warmUp)).limit(new Limit.Timed(o.duration())).outputDir(scratch);
    }
}
