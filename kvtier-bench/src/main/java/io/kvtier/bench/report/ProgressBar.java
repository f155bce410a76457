package io.kvtier.bench.report;

import java.io.PrintStream;
import java.util.Locale;

/**
 * A one-line progress bar redrawn in place with a carriage return, for a terminal on stderr only (the caller
 * decides, e.g. when {@code System.console() != null}), so stdout stays a clean table. Not thread-safe; driven by
 * the thread running the phase.
 */
public final class ProgressBar implements ProgressListener {
    private static final int WIDTH = 30;
    private final PrintStream out;

    public ProgressBar(PrintStream out) {
        this.out = out;
    }

    @Override
    public void update(Snapshot s) {
        out.print("\r" + line(s));
        out.flush();
    }

    @Override
    public void finished(Snapshot s) {
        out.print("\r" + line(s) + "\n");
        out.flush();
    }

    static String line(Snapshot s) {
        int filled = (int) Math.round(Math.clamp(s.fraction(), 0, 1) * WIDTH);
        double secs = Math.max(s.seconds(), 1e-9);
        return String.format(Locale.ROOT, "[%s%s] %3.0f%% %-26s %8d ops %9.1f ops/s %8.1f MB/s %6.1f s",
                "=".repeat(filled), " ".repeat(WIDTH - filled), s.fraction() * 100, s.label(), s.ops(),
                s.ops() / secs, s.bytes() / secs / 1e6, s.seconds());
    }
}
