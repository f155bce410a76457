package io.kvtier.bench.fleet;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A one-line progress bar for one point of the fleet benchmark (label, share of the point's time gone, requests
 * answered, errors, TTFT p50 so far), redrawn in place with a carriage return like
 * {@link io.kvtier.bench.report.ProgressBar}, whose snapshot counts bytes and has no errors or TTFT, so this is its
 * sibling rather than a use of it. For a terminal on stderr, so that stdout stays a clean table; where stderr is not a
 * terminal (a log file, CI) it prints a line every {@value #LOG_EVERY_MILLIS} ms instead of redrawing. One thread
 * ticks ({@link #tickUntil}); any other may {@link #stop} it.
 */
public final class FleetProgress {
    private static final int WIDTH = 30;
    private static final long TICK_MILLIS = 250;
    private static final long LOG_EVERY_MILLIS = 10_000;
    private final PrintStream out;
    private final String label;
    private final long startNanos;
    private final long endNanos;
    private final boolean inPlace;
    private final CountDownLatch stopped = new CountDownLatch(1);

    /**
     * @param label      the point, e.g. its rate label
     * @param startNanos when the point began ({@link System#nanoTime()})
     * @param endNanos   when it is to end: the bar is full then
     * @param inPlace    redraw one line (a terminal), else print a line now and then (a log)
     */
    public FleetProgress(PrintStream out, String label, long startNanos, long endNanos, boolean inPlace) {
        this.out = out;
        this.label = label;
        this.startNanos = startNanos;
        this.endNanos = endNanos;
        this.inPlace = inPlace;
    }

    /** Whether this process writes to a terminal, where the bar is redrawn in place. */
    public static boolean terminal() {
        java.io.Console console = System.console();
        return console != null && console.isTerminal();
    }

    /**
     * Redraws the line four times a second on the calling thread until {@link #stop}, then draws it once more and
     * ends the line.
     *
     * @param done    requests answered so far, counted or not
     * @param results the counted results so far (errors and TTFT come from them); a thread-safe list, copied
     */
    public void tickUntil(AtomicLong done, Collection<RequestResult> results) {
        long ticks = 0;
        try {
            while (!stopped.await(TICK_MILLIS, TimeUnit.MILLISECONDS)) {
                ticks++;
                if (inPlace) {
                    out.print("\r" + line(snapshot(done.get(), results, System.nanoTime())));
                    out.flush();
                } else if (ticks % (LOG_EVERY_MILLIS / TICK_MILLIS) == 0) {
                    out.println(line(snapshot(done.get(), results, System.nanoTime())));
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        out.print((inPlace ? "\r" : "") + line(snapshot(done.get(), results, System.nanoTime())) + "\n");
        out.flush();
    }

    /** Ends {@link #tickUntil}. */
    public void stop() {
        stopped.countDown();
    }

    Snapshot snapshot(long done, Collection<RequestResult> results, long nowNanos) {
        double fraction = endNanos == startNanos ? 1 : (double) (nowNanos - startNanos) / (endNanos - startNanos);
        return Snapshot.of(label, fraction, (nowNanos - startNanos) / 1e9, done, results);
    }

    /**
     * Where a point stands.
     *
     * @param label    the point
     * @param fraction of the point's time gone, 0..1
     * @param done     requests answered
     * @param errors   of the counted ones, failed
     * @param ttftP50  the median time to first token of the counted ones so far, seconds; NaN before the first
     * @param seconds  since the point began
     */
    record Snapshot(String label, double fraction, long done, long errors, double ttftP50, double seconds) {
        static Snapshot of(String label, double fraction, double seconds, long done,
                Collection<RequestResult> results) {
            List<RequestResult> copy = new ArrayList<>(results); // one toArray: atomic for synchronized lists
            double[] ttft = copy.stream().filter(RequestResult::ok).mapToDouble(RequestResult::ttftSeconds).sorted()
                    .toArray();
            return new Snapshot(label, fraction, done, copy.size() - ttft.length, LatencyStats.percentile(ttft, 50),
                    seconds);
        }
    }

    static String line(Snapshot s) {
        double fraction = Math.clamp(s.fraction(), 0, 1);
        int filled = (int) Math.round(fraction * WIDTH);
        double secs = Math.max(s.seconds(), 1e-9);
        String ttft = Double.isNaN(s.ttftP50()) ? "     -" : String.format(Locale.ROOT, "%6.3f", s.ttftP50());
        return String.format(Locale.ROOT, "[%s%s] %3.0f%% %-16s %7d req %7.2f req/s %5d err  TTFT p50 %s s  %6.1f s",
                "=".repeat(filled), " ".repeat(WIDTH - filled), fraction * 100, s.label(), s.done(), s.done() / secs,
                s.errors(), ttft, s.seconds());
    }
}
