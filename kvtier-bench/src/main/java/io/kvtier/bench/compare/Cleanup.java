package io.kvtier.bench.compare;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * Stops a run's servers (or clusters) and deletes its scratch directory, once, whichever comes first: the end of the
 * run or the JVM's shutdown hook (Ctrl-C). Thread-safe (synchronized).
 *
 * @param <T> what the run starts: each one added is closed by the {@code closer}
 */
public final class Cleanup<T> {
    private final Path scratch;
    private final Consumer<T> closer;
    private final List<T> started = new ArrayList<>();
    private boolean done;

    public Cleanup(Path scratch, Consumer<T> closer) {
        this.scratch = scratch;
        this.closer = closer;
    }

    /** Registers {@code item} to be closed by {@link #run}; closes it at once if that has run already. */
    public synchronized T add(T item) {
        if (done) {
            closer.accept(item);
            throw new IllegalStateException("shutting down");
        }
        started.add(item);
        return item;
    }

    public synchronized void run() {
        if (done) {
            return;
        }
        done = true;
        started.forEach(closer);
        try (Stream<Path> paths = Files.walk(scratch)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            System.err.println("could not delete " + scratch + ": " + e.getMessage());
        }
    }
}
