package io.kvtier.bench.cluster;

import io.kvtier.bench.compare.Cleanup;
import io.kvtier.common.Units;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Runs {@code kvtier bench cluster}: the scaling comparison and the failover timeline (either or both), each on
 * clusters of its own started in a temp dir, then prints and writes their reports into {@code --out}, with the
 * nodes' logs under {@code <out>/logs}. The nodes (kill -9) and the temp dir are always removed, by a shutdown hook
 * too (Ctrl-C). Runs on the calling thread.
 */
public final class ClusterBenchRun {
    private ClusterBenchRun() {
    }

    /**
     * What a run produced. {@code failed} is true when a scaling pass saw errors or wrong bytes, or the failover
     * run saw wrong bytes or lost a key; errors during the failover are what it measures, not a failure.
     */
    public record Outcome(Optional<ScalingTable> scaling, List<ScalingPass> passes, Optional<FailoverResult> failover,
            boolean failed) {}

    public static Outcome execute(ClusterBenchOptions o, PrintStream out) throws IOException, InterruptedException {
        Path scratch = Files.createTempDirectory("kvtier-bench-cluster-");
        Cleanup<LocalCluster> cleanup = new Cleanup<>(scratch, LocalCluster::close);
        Thread hook = new Thread(cleanup::run, "kvtier-bench-cluster-cleanup");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            Files.createDirectories(o.outputDir());
            out.println(machine());
            Optional<ScalingTable> table = Optional.empty();
            List<ScalingPass> passes = List.of();
            if (o.runs("scaling")) {
                passes = ScalingRun.execute(o, scratch, out, cleanup);
                ScalingTable t = ScalingTable.of(passes);
                out.println();
                t.print(out);
                t.write(o.outputDir(), o.describe(), passes);
                out.println("wrote " + o.outputDir().resolve("scaling.csv") + " and scaling.json");
                table = Optional.of(t);
            }
            Optional<FailoverResult> failover = Optional.empty();
            if (o.runs("failover")) {
                FailoverResult r = FailoverRun.execute(o, scratch, out, cleanup);
                report(o, r, out);
                failover = Optional.of(r);
            }
            out.println(machine());
            return new Outcome(table, passes, failover, failed(passes, failover));
        } finally {
            copyLogs(scratch, o.outputDir().resolve("logs"));
            cleanup.run();
            Runtime.getRuntime().removeShutdownHook(hook);
        }
    }

    private static void report(ClusterBenchOptions o, FailoverResult r, PrintStream out) throws IOException {
        out.println();
        r.events().forEach(e -> out.printf(Locale.ROOT, "failover: %6.2f s  %s%n", e.seconds(), e.label()));
        r.summary().lines().forEach(line -> out.println("failover: " + line));
        out.println("failover: errors by kind: " + (r.data().errorKinds().isEmpty() ? "none" : r.data().errorKinds()));
        r.load().forEach(op -> out.printf(Locale.ROOT, "failover: %s %d ok/miss, %d errors, %d wrong bytes, p99 %.2f"
                + " ms (first error: %s)%n", op.op(), op.count() - op.errors(), op.errors(), op.wrongBytes(),
                op.latencyMs().p99(), op.firstError().isEmpty() ? "none" : op.firstError()));
        r.verify().forEach(v -> out.printf("failover: read every key afterwards: %d hits, %d missing, %d errors, %d"
                + " wrong bytes%n", v.hits(), v.misses(), v.errors(), v.wrongBytes()));
        r.notes().forEach(n -> out.println("failover: " + n));
        FailoverReport.write(o.outputDir(), r, o.describe());
        out.println("wrote " + o.outputDir().resolve("failover.csv") + ", failover.json and " + r.chart().png()
                .getFileName() + " + .svg");
    }

    private static boolean failed(List<ScalingPass> passes, Optional<FailoverResult> failover) {
        return passes.stream().anyMatch(p -> p.result().failed())
                || failover.map(FailoverResult::lostOrWrongData).orElse(false);
    }

    /** Cores, memory and load average: on a shared 2-core machine the load says how much the figures can be trusted. */
    static String machine() {
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        String load;
        try {
            load = Files.readString(Path.of("/proc/loadavg")).trim();
        } catch (IOException e) {
            load = String.format(Locale.ROOT, "%.2f", os.getSystemLoadAverage());
        }
        return "machine: " + Runtime.getRuntime().availableProcessors() + " cores, " + Units.bytes(
                os.getTotalMemorySize()) + " RAM, load average " + load;
    }

    private static void copyLogs(Path scratch, Path into) {
        try (DirectoryStream<Path> parts = Files.newDirectoryStream(scratch, Files::isDirectory)) {
            for (Path part : parts) {
                try (DirectoryStream<Path> logs = Files.newDirectoryStream(part, "*.log")) {
                    for (Path log : logs) {
                        Files.createDirectories(into);
                        Files.copy(log, into.resolve(part.getFileName() + "-" + log.getFileName()),
                                StandardCopyOption.REPLACE_EXISTING);
                    }
                }
            }
        } catch (IOException e) {
            System.err.println("could not copy the node logs to " + into + ": " + e.getMessage());
        }
    }
}
