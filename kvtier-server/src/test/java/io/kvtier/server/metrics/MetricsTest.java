package io.kvtier.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.util.concurrent.FastThreadLocalThread;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.expositionformats.OpenMetricsTextFormatWriter;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The command counters of {@link Metrics}, counted per event loop: what they expose must be what Prometheus's own
 * Counter and classic Histogram expose for the same commands (the shapes they replaced), from event loops and other
 * threads alike, and INFO commandstats must count since CONFIG RESETSTAT.
 */
class MetricsTest {
    /** name, failed, nanos: a spread over the buckets, their edges and past the last. */
    private record Call(String name, boolean failed, long nanos) {
    }

    private static final List<Call> CALLS = List.of(new Call("get", false, 30_000), new Call("get", false, 50_000),
            new Call("get", true, 50_001), new Call("set", false, 2_500_000), new Call("set", false, 12_000_000_000L),
            new Call("client|list", false, 1), new Call("get", false, 999_999_999));

    @Test
    void exposesWhatPrometheusCountersAndAHistogramWould() throws Exception {
        Metrics metrics = new Metrics();
        // Half on an event loop's kind of thread (a slab of its own), half on a plain one (the shared slab).
        Thread loop = new FastThreadLocalThread(() -> record(metrics, 0));
        loop.start();
        loop.join();
        Thread plain = new Thread(() -> record(metrics, 1));
        plain.start();
        plain.join();
        metrics.rejected("auth");

        PrometheusRegistry oracle = new PrometheusRegistry();
        Counter commands = Counter.builder().name("kvtier_commands_total").help("Commands processed, by command")
                .labelNames("command").register(oracle);
        Counter errors = Counter.builder().name("kvtier_command_errors_total")
                .help("Commands answered with an error, by command").labelNames("command").register(oracle);
        Histogram latency = Histogram.builder().name("kvtier_command_duration_seconds")
                .help("Time from decoding a command to writing its reply, by command").labelNames("command")
                .classicUpperBounds(CommandCounts.UPPER_BOUNDS).classicOnly().register(oracle);
        for (String n : List.of("auth", "client|list", "get", "set")) {
            commands.labelValues(n);
            errors.labelValues(n);
            latency.labelValues(n);
        }
        for (Call c : CALLS) {
            commands.labelValues(c.name()).inc();
            if (c.failed()) {
                errors.labelValues(c.name()).inc();
            }
            latency.labelValues(c.name()).observe(c.nanos() / 1e9);
        }

        assertThat(text(metrics.registry(), false)).isEqualTo(text(oracle, false)).contains(
                "kvtier_commands_total{command=\"get\"} 4.0",
                "kvtier_command_duration_seconds_bucket{command=\"get\",le=\"5.0E-5\"} 2",
                "kvtier_command_duration_seconds_count{command=\"set\"} 2");
        assertThat(text(metrics.registry(), true)).isEqualTo(text(oracle, true));
    }

    @Test
    void commandStatsCountSinceTheLastReset() throws Exception {
        Metrics metrics = new Metrics();
        record(metrics, 0);
        record(metrics, 1);
        metrics.rejected("get");
        assertThat(metrics.commandStats()).containsExactly(
                new Metrics.CommandStat("client|list", 1, 0, 0, 0),
                new Metrics.CommandStat("get", 4, (30_000 + 50_000 + 50_001 + 999_999_999) / 1000, 1, 1),
                new Metrics.CommandStat("set", 2, (2_500_000 + 12_000_000_000L) / 1000, 0, 0));
        metrics.resetStats();
        assertThat(metrics.commandStats()).isEmpty();
        Thread loop = new FastThreadLocalThread(() -> metrics.command("get", false, 7_000));
        loop.start();
        loop.join();
        assertThat(metrics.commandStats()).containsExactly(new Metrics.CommandStat("get", 1, 7, 0, 0));
        // Prometheus's counters are not reset.
        assertThat(text(metrics.registry(), false)).contains("kvtier_commands_total{command=\"get\"} 5.0");
    }

    /** Records every other call of {@link #CALLS}, from {@code first}. */
    private static void record(Metrics metrics, int first) {
        for (int i = first; i < CALLS.size(); i += 2) {
            Call c = CALLS.get(i);
            metrics.command(c.name(), c.failed(), c.nanos());
        }
    }

    /** The command families' exposition, created timestamps left out (they differ by when each was made). */
    private static String text(PrometheusRegistry registry, boolean openMetrics) throws IOException {
        MetricSnapshots snapshots = registry.scrape(name -> name.startsWith("kvtier_command"));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        if (openMetrics) {
            OpenMetricsTextFormatWriter.create().write(out, snapshots);
        } else {
            PrometheusTextFormatWriter.create().write(out, snapshots);
        }
        return out.toString(StandardCharsets.UTF_8).lines().filter(l -> !l.contains("_created"))
                .collect(Collectors.joining("\n"));
    }
}
