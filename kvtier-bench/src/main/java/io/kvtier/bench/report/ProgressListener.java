package io.kvtier.bench.report;

/**
 * Hears how far a phase has got. Called from the thread that runs the phase (never from I/O threads), a few times
 * a second, so implementations need not be thread-safe.
 */
public interface ProgressListener {
    /** Hears nothing. */
    ProgressListener NONE = new ProgressListener() {
        @Override
        public void update(Snapshot snapshot) {
        }

        @Override
        public void finished(Snapshot snapshot) {
        }
    };

    void update(Snapshot snapshot);

    void finished(Snapshot snapshot);

    /**
     * Where a phase stands.
     *
     * @param label    what runs, e.g. {@code setget 1 MiB GET}
     * @param fraction done so far, 0..1 (requests started of a request limit, or time elapsed of a duration)
     * @param ops      operations completed
     * @param bytes    value bytes moved
     * @param seconds  time since the phase started
     */
    record Snapshot(String label, double fraction, long ops, long bytes, double seconds) {
    }
}
