package io.kvtier.bench.load;

import java.util.concurrent.CompletableFuture;

/**
 * One request of a workload (a single command, or a chain like LMCache's probe-fetch-store), run on a lane.
 * Implementations record into the lane's statistics and turn client failures into counted errors: the returned
 * future completes exceptionally only on a bug, which aborts the run.
 */
@FunctionalInterface
public interface Task {
    CompletableFuture<?> run(Lane lane);
}
