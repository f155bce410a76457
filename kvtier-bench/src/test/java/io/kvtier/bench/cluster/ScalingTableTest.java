package io.kvtier.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.kvtier.bench.report.BenchResult;
import io.kvtier.bench.report.Latency;
import io.kvtier.bench.report.OpResult;
import io.kvtier.bench.report.RunInfo;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class ScalingTableTest {
    private static OpResult row(String op, double seconds, long count, long latencyMicros) {
        Histogram h = Latency.newHistogram();
        for (int i = 0; i < count; i++) {
            h.recordValue(latencyMicros);
        }
        return new OpResult("setget", 1 << 20, op, count, seconds, count * (1L << 20), 0, 0, 0, 0, "",
                Latency.summarize(h), Latency.encode(h));
    }

    private static ScalingPass pass(int nodes, int round, long sets, long gets) {
        RunInfo info = new RunInfo("now", "127.0.0.1:1", "setget", 16, 1, Double.NaN, false, 1, "closed", Map.of());
        return new ScalingPass(nodes, round, new BenchResult(info, List.of(row("SET", 1, sets, 2000),
                row("GET", 1, gets, 1000))));
    }

    private static final List<ScalingPass> PASSES = List.of(pass(1, 1, 1000, 2000), pass(3, 1, 600, 1800),
            pass(1, 2, 1200, 2000), pass(3, 2, 800, 2200));

    @Test
    void roundsAreAveragedPerOperationAndClusterSize() {
        ScalingTable t = ScalingTable.of(PASSES);

        assertThat(t.rows()).extracting(ScalingRow::op, ScalingRow::nodes).containsExactly(
                org.assertj.core.groups.Tuple.tuple("SET", 1), org.assertj.core.groups.Tuple.tuple("SET", 3),
                org.assertj.core.groups.Tuple.tuple("GET", 1), org.assertj.core.groups.Tuple.tuple("GET", 3));
        ScalingRow set3 = t.rows().get(1);
        assertThat(set3.rounds()).isEqualTo(2);
        assertThat(set3.opsPerSec()).isEqualTo(700);
        assertThat(set3.mbPerSec()).isCloseTo(700 * 1.048576, within(1e-6));
        assertThat(set3.p50Ms()).isCloseTo(2.0, within(0.01));
    }

    @Test
    void theRatioIsManyNodesOverOneNodeOfTheSameOperation() {
        ScalingTable t = ScalingTable.of(PASSES);

        assertThat(t.ratioToOneNode(t.rows().get(1))).isCloseTo(700.0 / 1100, within(1e-9));
        assertThat(t.ratioToOneNode(t.rows().get(3))).isCloseTo(1.0, within(1e-9));
    }

    @Test
    void theTableTheCsvAndTheJsonCarryTheSameFigures() {
        ScalingTable t = ScalingTable.of(PASSES);
        ByteArrayOutputStream out = new ByteArrayOutputStream();

        t.print(new PrintStream(out, true, StandardCharsets.UTF_8));

        assertThat(out.toString(StandardCharsets.UTF_8)).contains("0.64x", "vs 1 node");
        assertThat(t.toCsv()).startsWith(ScalingTable.CSV_HEADER + "\n")
                .contains("SET,3,2,700.0000,734.0032,").contains(",0.6364\n");
        assertThat(t.toJson(Map.of("nodes", "3"), PASSES)).contains("\"kvtier-bench-cluster-scaling/1\"",
                "\"ratioToOneNode\"", "\"passes\"");
    }
}
