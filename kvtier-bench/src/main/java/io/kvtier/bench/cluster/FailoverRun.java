package io.kvtier.bench.cluster;

import io.kvtier.bench.chart.Marker;
import io.kvtier.bench.chart.TimelineChart;
import io.kvtier.bench.compare.Cleanup;
import io.kvtier.bench.load.ClusterEndpoint;
import io.kvtier.bench.load.Limit;
import io.kvtier.bench.load.LoadGenerator;
import io.kvtier.bench.load.Payloads;
import io.kvtier.bench.load.PhaseOutcome;
import io.kvtier.bench.report.OpResult;
import io.kvtier.bench.report.ProgressListener;
import io.kvtier.client.cluster.ClusterClientOptions;
import io.kvtier.common.Units;
import io.kvtier.common.chart.ChartFiles;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The failover timeline: {@code nodes} nodes, every key written first, an untimed warm-up of the mixed load, then
 * the recorded timeline with n2 killed and a new node joining (see {@link FailoverScenario}), then a read of every
 * key. One closed loop of {@code -c} lanes keeps the load steady throughout, so the ops/s curve shows what the
 * cluster could serve at each moment. Runs on the calling thread; owns the cluster and the cluster client it starts.
 */
final class FailoverRun {
    private static final Duration WARM_UP_MAX = Duration.ofSeconds(5);
    private static final Duration SETTLE_TIMEOUT = Duration.ofSeconds(60);

    private final ClusterBenchOptions o;
    private final PrintStream out;

    private FailoverRun(ClusterBenchOptions o, PrintStream out) {
        this.o = o;
        this.out = out;
    }

    static FailoverResult execute(ClusterBenchOptions o, Path scratch, PrintStream out, Cleanup<LocalCluster> cleanup)
            throws IOException, InterruptedException {
        return new FailoverRun(o, out).run(scratch, cleanup);
    }

    private FailoverResult run(Path scratch, Cleanup<LocalCluster> cleanup) throws IOException, InterruptedException {
        out.printf("failover: starting %d nodes (--replicas %d, failure timeout %d ms) ...%n", o.nodes(),
                o.node().replicas(), o.node().failureTimeout().toMillis());
        try (LocalCluster cluster = cleanup.add(LocalCluster.start(o.node(), scratch.resolve("failover"),
                "kvtier-bench-failover", o.nodes(), 1))) {
            Timeline timeline = new Timeline(o.bucket(), o.timeline(), o.timeout().plusSeconds(2));
            FailoverLoad load = new FailoverLoad(o.timelineKeys(), o.timelineValueSize(), o.writePercent(), o.seed());
            ClusterClientOptions routing = new ClusterClientOptions(cluster.first().endpoint(), null, o.connections(),
                    o.timeout(), o.via());
            try (ClusterEndpoint endpoint = ClusterEndpoint.open(routing, timeline);
                 Payloads payloads = new Payloads(o.verify(), o.seed());
                 LoadGenerator generator = new LoadGenerator(endpoint.senders(), 1, Double.NaN, payloads,
                         ProgressListener.NONE)) {
                prepare(generator, load);
                timeline.start();
                List<TimelineEvent> events;
                List<String> problems;
                PhaseOutcome mixed;
                try (FailoverScenario scenario = FailoverScenario.start(cluster, timeline, endpoint.client(),
                        o.killAt(), o.joinAt())) {
                    mixed = generator.run(load.mixed("timeline", new Limit.Timed(o.timeline())));
                    events = scenario.stop();
                    problems = scenario.problems();
                }
                TimelineData data = timeline.snapshot(timeline.bucketsFor(o.timeline()));
                List<String> notes = new ArrayList<>(problems);
                List<OpResult> verify = o.verify() ? verify(cluster, generator, load, notes) : List.of();
                notes.addAll(0, endpoint.notes());
                FailoverSummary summary = FailoverSummary.of(data, events, o.timeline().toMillis() / 1000.0);
                ChartFiles chart = chart(data, events);
                return new FailoverResult(data, events, summary, mixed.results(), verify, notes, chart);
            }
        }
    }

    private void prepare(LoadGenerator generator, FailoverLoad load) {
        out.printf("failover: writing %d keys of %s, then %d ms of untimed load ...%n", o.timelineKeys(),
                Units.bytes(o.timelineValueSize()), warmUp().toMillis());
        PhaseOutcome preload = generator.run(load.preload());
        preload.results().stream().filter(OpResult::failed).forEach(r -> out.printf("failover: preload saw %d"
                + " errors (first: %s); those keys may be missing in the final read%n", r.errors(), r.firstError()));
        if (!warmUp().isZero()) {
            generator.run(load.mixed("warm-up", new Limit.Timed(warmUp())));
        }
    }

    /**
     * Reads every key once the cluster has settled (every live node on one table of the expected size, nothing left
     * to import; waited for at most {@link #SETTLE_TIMEOUT}), so that a miss means a lost key and not a table change
     * in progress.
     */
    private List<OpResult> verify(LocalCluster cluster, LoadGenerator generator, FailoverLoad load,
            List<String> notes) throws InterruptedException {
        int members = cluster.live().size();
        out.printf("failover: waiting for the %d live nodes to settle, then reading every key ...%n", members);
        try {
            Duration settled = cluster.awaitAgreement(members, SETTLE_TIMEOUT);
            notes.add(String.format(Locale.ROOT, "the %d live nodes agreed on one table with nothing left to import"
                    + " %.1f s after the timeline ended", members, settled.toMillis() / 1000.0));
        } catch (IOException e) {
            notes.add("the final read ran before the cluster settled: " + e.getMessage());
        }
        return generator.run(load.readAll()).results();
    }

    private Duration warmUp() {
        return o.serverWarmUp().compareTo(WARM_UP_MAX) < 0 ? o.serverWarmUp() : WARM_UP_MAX;
    }

    private ChartFiles chart(TimelineData data, List<TimelineEvent> events) throws IOException {
        int n = data.buckets();
        double[] seconds = new double[n];
        double[] reads = new double[n];
        double[] writes = new double[n];
        double[] errors = new double[n];
        double[] victim = new double[n];
        for (int b = 0; b < n; b++) {
            seconds[b] = data.startSeconds(b) + data.bucketSeconds() / 2;
            reads[b] = data.perSecond(data.get(TimelineData.READS_OK, b));
            writes[b] = data.perSecond(data.get(TimelineData.WRITES_OK, b));
            errors[b] = data.perSecond(data.errors(b));
            victim[b] = data.perSecond(data.get(TimelineData.VICTIM_OK, b));
        }
        Map<String, double[]> left = new LinkedHashMap<>();
        left.put("GET ok/s", reads);
        left.put("SET ok/s", writes);
        left.put("ok/s on n2's keys (sent after the kill)", victim);
        String via = o.via() == ClusterClientOptions.Mode.SLOTS ? "cluster client" : "through node 1's proxy";
        String title = String.format(Locale.ROOT, "Failover: %d nodes, kill -9 n2, a node joins (%s, %s values, "
                + "c=%d)", o.nodes(), via, Units.bytes(o.timelineValueSize()), o.connections());
        return TimelineChart.write(o.outputDir().resolve("failover-timeline"), title, "successful ops/s",
                "errors/s", seconds, left, Map.of("errors/s", errors), events.stream()
                        .map(e -> new Marker(e.seconds(), e.label())).toList());
    }
}
