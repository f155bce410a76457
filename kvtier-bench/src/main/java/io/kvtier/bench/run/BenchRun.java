package io.kvtier.bench.run;

import io.kvtier.bench.load.ClusterEndpoint;
import io.kvtier.bench.load.Connections;
import io.kvtier.bench.load.Endpoint;
import io.kvtier.bench.load.LoadGenerator;
import io.kvtier.bench.load.Payloads;
import io.kvtier.bench.load.PhaseOutcome;
import io.kvtier.bench.report.BenchResult;
import io.kvtier.bench.report.BenchResultJson;
import io.kvtier.bench.report.CsvReport;
import io.kvtier.bench.report.OpResult;
import io.kvtier.bench.report.ProgressListener;
import io.kvtier.bench.report.ResultTable;
import io.kvtier.bench.report.RunInfo;
import io.kvtier.bench.workload.LmcacheSpec;
import io.kvtier.bench.workload.LmcacheWorkload;
import io.kvtier.bench.workload.OverflowSpec;
import io.kvtier.bench.workload.OverflowWorkload;
import io.kvtier.bench.workload.SetGetSpec;
import io.kvtier.bench.workload.SetGetWorkload;
import io.kvtier.bench.workload.WarmUp;
import io.kvtier.bench.workload.Workload;
import io.kvtier.client.ClientOptions;
import io.kvtier.client.HostPort;
import io.kvtier.client.cluster.ClusterClientOptions;
import io.kvtier.client.cluster.CommandObserver;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Runs one workload against one endpoint (a server, or with {@code --cluster} every primary of a cluster): connect,
 * warm up (untimed, its keys deleted afterwards), run the workload's phases, then print the table and write
 * {@code <out>/<workload>.json} and {@code .csv}. Runs on the caller's thread; the requests themselves run on the
 * client's event loops. Owns and closes the connections, payload buffers and load generator it makes.
 */
public final class BenchRun {
    private BenchRun() {
    }

    public static BenchResult execute(BenchOptions options, PrintStream out, ProgressListener progress)
            throws IOException {
        Workload workload = workload(options);
        String startedAt = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        List<OpResult> rows = new ArrayList<>();
        List<String> notes = measure(options, workload, progress, rows);
        BenchResult result = new BenchResult(runInfo(options, startedAt), rows);
        report(result, options, workload.name(), notes, out);
        return result;
    }

    /** As {@link #execute}, but prints and writes nothing: for callers that report many runs together. */
    public static BenchResult measure(BenchOptions options, ProgressListener progress) throws IOException {
        Workload workload = workload(options);
        String startedAt = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        List<OpResult> rows = new ArrayList<>();
        measure(options, workload, progress, rows);
        return new BenchResult(runInfo(options, startedAt), rows);
    }

    /** Runs the warm-up and the workload, adding a row per operation; returns the endpoint's notes. */
    private static List<String> measure(BenchOptions options, Workload workload, ProgressListener progress,
            List<OpResult> rows) throws IOException {
        try (Endpoint endpoint = open(options);
             Payloads payloads = new Payloads(options.verify(), options.seed());
             LoadGenerator generator = new LoadGenerator(endpoint.senders(), options.pipeline(),
                     options.rate().orElse(Double.NaN), payloads, progress)) {
            warmUp(options, endpoint, generator);
            workload.run(phase -> {
                PhaseOutcome outcome = generator.run(phase);
                rows.addAll(outcome.results());
                return outcome;
            });
            return endpoint.notes();
        }
    }

    /** One server, or with {@code --cluster} every primary of the cluster the endpoint belongs to. */
    static Endpoint open(BenchOptions options) throws IOException {
        if (options.cluster()) {
            return ClusterEndpoint.open(new ClusterClientOptions(new HostPort(options.host(), options.port()),
                    options.password().orElse(null), options.connections(), options.timeout(),
                    ClusterClientOptions.Mode.SLOTS), CommandObserver.NONE);
        }
        ClientOptions client = new ClientOptions(min(options.timeout(), Duration.ofSeconds(10)), options.timeout());
        return Connections.open(options.host(), options.port(), options.password().orElse(null),
                options.connections(), client, options.tls().isPresent() ? options.tls().get().clientContext() : null);
    }

    private static void report(BenchResult result, BenchOptions options, String name, List<String> notes,
            PrintStream out) throws IOException {
        ResultTable.print(result, out);
        notes.forEach(out::println);
        Files.createDirectories(options.outputDir());
        Path json = options.outputDir().resolve(name + ".json");
        Path csv = options.outputDir().resolve(name + ".csv");
        BenchResultJson.write(result, json);
        CsvReport.write(result, csv);
        out.println("wrote " + json + " and " + csv);
    }

    static Workload workload(BenchOptions o) {
        return switch (o.workload()) {
            case SetGetSpec s -> new SetGetWorkload(o.valueSizes(), o.keySpace(), o.keyPrefix(), o.limit());
            case LmcacheSpec s -> new LmcacheWorkload(s, o.limit(), o.seed());
            case OverflowSpec s -> new OverflowWorkload(s, o.valueSizes().getFirst(), o.keyPrefix(), o.seed());
        };
    }

    /** Untimed; its failures are reported on stderr (they usually foretell the run's) but not counted. */
    private static void warmUp(BenchOptions options, Endpoint endpoint, LoadGenerator generator)
            throws IOException {
        if (options.warmUp().isNone()) {
            return;
        }
        PhaseOutcome outcome = generator.run(WarmUp.phase(options.keyPrefix(), options.valueSizes().getFirst(),
                options.warmUp()));
        outcome.results().stream().filter(OpResult::failed).forEach(r -> System.err.printf(
                "warm-up %s: %d errors, %d wrong bytes (first error: %s)%n", r.op(), r.errors(), r.wrongBytes(),
                r.firstError()));
        endpoint.delete(WarmUp.keys(options.keyPrefix()), options.timeout().toMillis() + 1000);
    }

    static RunInfo runInfo(BenchOptions o, String startedAt) {
        Map<String, String> parameters = new LinkedHashMap<>();
        parameters.put("valueSizes", o.valueSizesText());
        parameters.put("keySpace", o.keySpace() == 0 ? "auto" : Long.toString(o.keySpace()));
        parameters.put("keyPrefix", o.keyPrefix());
        parameters.put("limit", o.limit().toString());
        parameters.put("warmUp", o.warmUp().toString());
        parameters.put("timeout", o.timeout().toMillis() + "ms");
        parameters.putAll(o.workload().parameters());
        if (o.cluster()) {
            parameters.put("cluster", "true");
        }
        double rate = o.rate().orElse(Double.NaN);
        return new RunInfo(startedAt, o.target(), o.workload().name(), o.connections(), o.pipeline(), rate,
                o.verify(), o.seed(), RunInfo.latencyNote(o.connections(), o.pipeline(), rate), parameters);
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }
}
