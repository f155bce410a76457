package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.bench.cluster.ClusterBenchOptions;
import io.kvtier.bench.cluster.ClusterBenchRun;
import io.kvtier.bench.cluster.FailoverResult;
import io.kvtier.bench.cluster.NodeSettings;
import io.kvtier.bench.cluster.ScalingRow;
import io.kvtier.bench.report.OpResult;
import io.kvtier.client.cluster.ClusterClientOptions;
import io.kvtier.common.Json;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A short real {@code kvtier bench cluster}: 1 node against 3 (one round of 2 s passes, 64 KiB values) and a failover
 * timeline compressed to 12 s (kill -9 of n2 at 3 s, a fourth node starting at 5 s), with --verify. Asserts the
 * outputs exist, parse, and hold sane figures; performance is not asserted. Node processes come from the repo's
 * launcher, like every IT.
 * Long tier (README "Tests"): {@code ./kvtier test -Plong}.
 */
@Tag("long")
class ClusterBenchIT {
    @TempDir
    Path out;

    @Test
    void measuresScalingAndAFailoverTimelineAndWritesParseableReports() throws Exception {
        NodeSettings node = new NodeSettings(KvtierProcess.ROOT.resolve("kvtier"), 128L << 20, 512L << 20, 1,
                Duration.ofSeconds(2));
        ClusterBenchOptions o = new ClusterBenchOptions(List.of("scaling", "failover"), 3, node, 4, 1,
                Duration.ofSeconds(2), 64 << 10, Duration.ZERO, Duration.ofSeconds(12), Duration.ofSeconds(3),
                Duration.ofSeconds(5), Duration.ofMillis(100), 16 << 10, 500, 50, ClusterClientOptions.Mode.SLOTS,
                Duration.ofSeconds(2), true, 1, out);
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        OutputStream both = new OutputStream() { // the run's progress shows in the test output as it happens
            @Override
            public void write(int b) {
                printed.write(b);
                System.out.write(b);
            }
        };

        ClusterBenchRun.Outcome outcome = ClusterBenchRun.execute(o, new PrintStream(both, true,
                StandardCharsets.UTF_8));

        String text = printed.toString(StandardCharsets.UTF_8);
        assertThat(outcome.failed()).as(text).isFalse();
        assertThat(outcome.scaling().orElseThrow().rows()).extracting(ScalingRow::nodes).containsExactly(1, 3, 1, 3);
        assertThat(outcome.scaling().orElseThrow().rows()).allSatisfy(r -> {
            assertThat(r.opsPerSec()).isPositive();
            assertThat(r.errors()).isZero();
        });
        assertThat(Files.readString(out.resolve("scaling.csv")).lines()).hasSize(5);
        assertThat(json(out.resolve("scaling.json"))).containsKeys("rows", "passes");

        FailoverResult failover = outcome.failover().orElseThrow();
        assertThat(failover.killed()).isTrue();
        assertThat(failover.ok()).isPositive();
        assertThat(failover.errors()).as("errors are bounded: a few per lane around the kill and the join")
                .isLessThan(failover.ok() / 4);
        assertThat(failover.summary().opsLast5s()).as("the survivors serve after the kill").isPositive();
        assertThat(failover.verify()).singleElement().satisfies(read -> {
            assertThat(read.hits()).isEqualTo(500);
            assertThat(read.misses()).isZero();
            assertThat(read.wrongBytes()).isZero();
        });
        assertThat(failover.load()).extracting(OpResult::wrongBytes).containsOnly(0L);
        List<String> csv = Files.readString(out.resolve("failover.csv")).lines().toList();
        assertThat(csv).hasSize(1 + 120);
        assertThat(csv.getFirst()).startsWith("seconds,readsOk,writesOk,readErrors,writeErrors");
        Map<String, Object> report = json(out.resolve("failover.json"));
        assertThat(report).containsKeys("summary", "events", "buckets", "errorKinds");
        assertThat(report.get("events").toString()).contains("kill -9 n2");
        assertThat(out.resolve("failover-timeline.png")).isNotEmptyFile();
        assertThat(out.resolve("failover-timeline.svg")).isNotEmptyFile();
        assertThat(out.resolve("logs")).isDirectoryContaining(p -> p.getFileName().toString().endsWith(".log"));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> json(Path file) throws Exception {
        return (Map<String, Object>) Json.parse(Files.readString(file));
    }
}
