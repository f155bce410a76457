package io.kvtier.bench.cluster;

import io.kvtier.client.cluster.ClusterClient;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The faults of the failover run, on the timeline's clock: kill -9 of node n2 at {@code killAt} (never n1, the
 * entry node the load and the watcher start from), a new node started at {@code joinAt}, and CLUSTER INFO polled
 * every {@value #POLL_MILLIS} ms for the cluster's own events. Runs on its own threads (killer, joiner, poller);
 * {@link #stop} ends them and returns the events in time order. Owns its threads, not the cluster.
 */
final class FailoverScenario implements AutoCloseable {
    static final long POLL_MILLIS = 100;
    static final int VICTIM = 1;

    private final LocalCluster cluster;
    private final Timeline timeline;
    private final ClusterClient client;
    private final List<TimelineEvent> events = new CopyOnWriteArrayList<>();
    private final List<String> problems = new CopyOnWriteArrayList<>();
    private final ScheduledExecutorService threads = Executors.newScheduledThreadPool(3, r -> {
        Thread t = new Thread(r, "kvtier-bench-failover");
        t.setDaemon(true);
        return t;
    });

    private FailoverScenario(LocalCluster cluster, Timeline timeline, ClusterClient client) {
        this.cluster = cluster;
        this.timeline = timeline;
        this.client = client;
    }

    /** Schedules the kill and the join relative to the timeline's time 0 (already started) and starts polling. */
    static FailoverScenario start(LocalCluster cluster, Timeline timeline, ClusterClient client, Duration killAt,
            Duration joinAt) throws IOException {
        FailoverScenario s = new FailoverScenario(cluster, timeline, client);
        ClusterWatcher watcher = new ClusterWatcher(cluster, timeline, s.events::add);
        watcher.baseline();
        long elapsed = System.nanoTime() - timeline.originNanos();
        s.threads.schedule(s::kill, killAt.toNanos() - elapsed, TimeUnit.NANOSECONDS);
        s.threads.schedule(s::join, joinAt.toNanos() - elapsed, TimeUnit.NANOSECONDS);
        s.threads.scheduleWithFixedDelay(() -> {
            try {
                watcher.poll();
            } catch (RuntimeException e) { // a throwing task would silently end the polling
                s.problems.add("polling CLUSTER INFO failed: " + e);
            }
        }, 0, POLL_MILLIS, TimeUnit.MILLISECONDS);
        return s;
    }

    /**
     * The marker goes at the signal; successes on the victim's keys count from when the process is gone (it may
     * still answer in the milliseconds between SIGKILL and its exit).
     */
    private void kill() {
        LocalCluster.Node victim = cluster.nodes().get(VICTIM);
        BitSet slots = client.slotsOf(victim.endpoint());
        long signal = System.nanoTime();
        victim.process().kill();
        timeline.markKill(System.nanoTime(), slots);
        events.add(new TimelineEvent(timeline.seconds(signal), TimelineEvent.KILL, "kill -9 " + victim.id()));
    }

    private void join() {
        long now = System.nanoTime();
        String id = "n" + (cluster.nodes().size() + 1);
        events.add(new TimelineEvent(timeline.seconds(now), TimelineEvent.JOIN, id + " starts"));
        try {
            LocalCluster.Node node = cluster.add();
            events.add(new TimelineEvent(timeline.seconds(System.nanoTime()), TimelineEvent.UP, node.id()
                    + " answers PING"));
        } catch (IOException e) {
            problems.add("the joining node did not start: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            problems.add("the run ended before the joining node answered PING");
        }
    }

    /**
     * Stops the threads (a join still starting is interrupted) and returns the events, earliest first. An interrupt
     * while waiting for them is kept for the caller (the interrupt flag) and the events so far are returned.
     */
    List<TimelineEvent> stop() {
        threads.shutdownNow();
        try {
            if (!threads.awaitTermination(10, TimeUnit.SECONDS)) {
                problems.add("the failover threads did not stop within 10 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            problems.add("interrupted while stopping the failover threads");
        }
        List<TimelineEvent> sorted = new ArrayList<>(events);
        sorted.sort(Comparator.comparingDouble(TimelineEvent::seconds));
        return sorted;
    }

    /** What went wrong with the scenario itself (not the cluster's errors, which the timeline counts). */
    List<String> problems() {
        return List.copyOf(problems);
    }

    @Override
    public void close() {
        stop();
    }
}
