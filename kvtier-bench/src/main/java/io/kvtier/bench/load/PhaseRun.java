package io.kvtier.bench.load;

import io.kvtier.bench.report.ProgressListener;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The state of one phase while it runs: its lanes, the next request index, and the schedule.
 *
 * <p>Each lane takes the next index when its previous task completes. Closed loop: the task starts at once, and
 * the limit is checked against the current time. Open loop: request {@code i} is due at {@code start + i / rate};
 * a lane that is early waits on the pacer thread, a lane that is late starts at once, and either way the task's
 * clock starts at the due time, so a stall is charged to every request that fell due during it. A request due
 * before the end of a timed phase is still sent after the end. At most {@code connections x pipeline} tasks are in
 * flight, so a server slower than the rate makes requests late rather than piling up without bound.
 *
 * <p>Threading: tasks continue on event loops (or the pacer); counters are atomic. A continuation whose future is
 * already complete hops to the pacer so a failing connection cannot grow the stack.
 */
final class PhaseRun {
    private static final long TICK_MILLIS = 250;
    private final Phase phase;
    private final double nanosPerRequest;
    private final ScheduledExecutorService pacer;
    private final List<Lane> lanes = new ArrayList<>();
    private final AtomicLong nextIndex = new AtomicLong();
    private final AtomicLong started = new AtomicLong();
    private final LongAdder ops = new LongAdder();
    private final LongAdder bytes = new LongAdder();
    private long startNanos;

    PhaseRun(Phase phase, List<CommandSender> senders, int pipeline, double rate, Payloads payloads,
            ScheduledExecutorService pacer) {
        this.phase = phase;
        this.nanosPerRequest = Double.isNaN(rate) ? Double.NaN : 1e9 / rate;
        this.pacer = pacer;
        for (int p = 0; p < pipeline; p++) {
            for (CommandSender sender : senders) {
                lanes.add(new Lane(sender, phase.ops(), payloads, ops, bytes));
            }
        }
    }

    PhaseOutcome execute(ProgressListener listener) {
        startNanos = System.nanoTime();
        List<CompletableFuture<Void>> done = new ArrayList<>();
        for (Lane lane : lanes) {
            CompletableFuture<Void> laneDone = new CompletableFuture<>();
            done.add(laneDone);
            startNext(lane, laneDone);
        }
        CompletableFuture<Void> all = CompletableFuture.allOf(done.toArray(CompletableFuture[]::new));
        while (!finished(all)) {
            listener.update(snapshot(System.nanoTime() - startNanos));
        }
        long elapsed = System.nanoTime() - startNanos;
        listener.finished(snapshot(elapsed));
        return new PhaseOutcome(phase, elapsed, started.get(), merged());
    }

    private boolean finished(CompletableFuture<Void> all) {
        try {
            all.get(TICK_MILLIS, TimeUnit.MILLISECONDS);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + phase.label(), e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("a task of " + phase.label() + " failed: " + e.getCause(), e.getCause());
        }
    }

    private void startNext(Lane lane, CompletableFuture<Void> laneDone) {
        if (!lane.isOpen()) {
            laneDone.complete(null);
            return;
        }
        long index = nextIndex.getAndIncrement();
        long now = System.nanoTime();
        long due = Double.isNaN(nanosPerRequest) ? now : startNanos + (long) (index * nanosPerRequest);
        Task task = phase.limit().admits(index, due - startNanos) ? phase.tasks().task(index) : null;
        if (task == null) {
            laneDone.complete(null);
            return;
        }
        started.incrementAndGet();
        if (due > now) {
            pacer.schedule(() -> runTask(lane, task, due, laneDone), due - now, TimeUnit.NANOSECONDS);
        } else {
            runTask(lane, task, due, laneDone);
        }
    }

    private void runTask(Lane lane, Task task, long due, CompletableFuture<Void> laneDone) {
        lane.beginTask(due);
        CompletableFuture<?> running;
        try {
            running = task.run(lane);
        } catch (RuntimeException e) {
            laneDone.completeExceptionally(e);
            return;
        }
        if (running.isDone()) {
            pacer.execute(() -> afterTask(lane, running, laneDone));
        } else {
            running.whenComplete((ignored, failure) -> afterTask(lane, running, laneDone));
        }
    }

    private void afterTask(Lane lane, CompletableFuture<?> task, CompletableFuture<Void> laneDone) {
        if (task.isCompletedExceptionally()) {
            task.whenComplete((ignored, failure) -> laneDone.completeExceptionally(failure));
            return;
        }
        try {
            startNext(lane, laneDone);
        } catch (RuntimeException e) {
            laneDone.completeExceptionally(e);
        }
    }

    private ProgressListener.Snapshot snapshot(long elapsedNanos) {
        return new ProgressListener.Snapshot(phase.label(), phase.limit().fraction(started.get(), elapsedNanos),
                ops.sum(), bytes.sum(), elapsedNanos / 1e9);
    }

    private Map<String, OpStats> merged() {
        Map<String, OpStats> total = new LinkedHashMap<>();
        for (String op : phase.ops()) {
            OpStats sum = new OpStats();
            lanes.forEach(lane -> lane.stats(op).addTo(sum));
            total.put(op, sum);
        }
        return total;
    }
}
