package io.kvtier.bench.cluster;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * The flags every node of a benchmark cluster gets. Immutable; validated by {@link ClusterBenchOptions}.
 *
 * @param launcher       kvtier's launcher script
 * @param memory         {@code --memory} of each node
 * @param disk           {@code --disk} of each node
 * @param replicas       {@code --replicas}: backups per slot (a 1-node cluster has none whatever this says)
 * @param failureTimeout {@code --failure-timeout}
 */
public record NodeSettings(Path launcher, long memory, long disk, int replicas, Duration failureTimeout) {
    public NodeSettings {
        Objects.requireNonNull(launcher, "launcher");
        Objects.requireNonNull(failureTimeout, "failureTimeout");
    }
}
