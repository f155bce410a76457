package io.kvtier.bench.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * Kills the run's clusters and deletes its scratch directory, once, whichever comes first: the end of the run or
 * the JVM's shutdown hook (Ctrl-C). Thread-safe (synchronized).
 */
final class Cleanup {
    private final Path scratch;
    private final List<LocalCluster> clusters = new ArrayList<>();
    private boolean done;

    Cleanup(Path scratch) {
        this.scratch = scratch;
    }

    synchronized LocalCluster add(LocalCluster cluster) {
        if (done) {
            cluster.close();
            throw new IllegalStateException("shutting down");
        }
        clusters.add(cluster);
        return cluster;
    }

    synchronized void run() {
        if (done) {
            return;
        }
        done = true;
        clusters.forEach(LocalCluster::close);
        try (Stream<Path> paths = Files.walk(scratch)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            System.err.println("could not delete " + scratch + ": " + e.getMessage());
        }
    }
}
