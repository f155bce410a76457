package io.kvtier.bench.load;

import io.kvtier.bench.report.ProgressListener;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/**
 * Drives phases over {@code senders x pipeline} lanes, each running one task at a time (a sender is a connection,
 * or a cluster client's share of its connections).
 *
 * <p><b>Closed loop</b> (no rate): a lane sends its next request as soon as the previous one completed, so the
 * server is kept saturated and each latency is a service time from send start to the last reply byte. Time a
 * request would have spent waiting during a server stall is not seen (coordinated omission); the report says so.
 *
 * <p><b>Open loop</b> (a rate in requests/s): requests fall due on a fixed schedule and each latency runs from the
 * request's intended send time, so stalls are charged to every request that should have been sent during them
 * (the correction wrk2 makes); see {@link PhaseRun}.
 *
 * <p>Runs one phase at a time, from the caller's thread, which also feeds the progress listener. Owns the pacer
 * thread; does not own the senders or payloads.
 */
public final class LoadGenerator implements PhaseRunner, AutoCloseable {
    private final List<CommandSender> senders;
    private final int pipeline;
    private final double rate;
    private final Payloads payloads;
    private final ProgressListener progress;
    private final ScheduledExecutorService pacer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "kvtier-bench-pacer");
        t.setDaemon(true);
        return t;
    });

    /** {@code rate} in requests/s, or NaN for a closed loop. */
    public LoadGenerator(List<CommandSender> senders, int pipeline, double rate, Payloads payloads,
            ProgressListener progress) {
        if (senders.isEmpty() || pipeline < 1) {
            throw new IllegalArgumentException("need at least one connection and a pipeline of 1");
        }
        this.senders = List.copyOf(senders);
        this.pipeline = pipeline;
        this.rate = rate;
        this.payloads = payloads;
        this.progress = progress;
    }

    @Override
    public PhaseOutcome run(Phase phase) {
        return new PhaseRun(phase, senders, pipeline, rate, payloads, pacer).execute(progress);
    }

    @Override
    public void close() {
        pacer.shutdownNow();
    }
}
