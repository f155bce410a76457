package io.kvtier.bench.compare;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.kvtier.bench.limits.MachineInfo;
import io.kvtier.bench.limits.MachineLimitsResult;
import io.kvtier.bench.report.BenchResult;
import io.kvtier.bench.report.Latency;
import io.kvtier.bench.report.LatencySummary;
import io.kvtier.bench.report.OpResult;
import io.kvtier.bench.report.RunInfo;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class ComparisonTest {
    static OpResult row(String workload, String op, double mbPerSec, double p99, long hits, long misses) {
        Histogram h = Latency.newHistogram();
        h.recordValue((long) (p99 * 1000));
        long bytes = (long) (mbPerSec * 1e6);
        return new OpResult(workload, 1 << 20, op, hits + misses + 1, 1.0, bytes, hits, misses, 0, 0, "",
                new LatencySummary(p99 / 2, p99, p99, p99, p99, p99 / 2), Latency.encode(h));
    }

    static Pass pass(Server server, int round, double factor, OpResult... rows) {
        RunInfo run = new RunInfo("2026-11-22T00:00:00Z", "127.0.0.1:1", rows[0].workload(), 4, 1, Double.NaN,
                false, 1, "closed", Map.of());
        return new Pass(server, round, 4, factor, new BenchResult(run, List.of(rows)));
    }

    static MachineLimitsResult limits(long loopback, long randomRead) {
        return new MachineLimitsResult(loopback, loopback * 2, 1, 1, randomRead, true, 1 << 24, 100,
                new MachineInfo(2, 1L << 30, "cpu", "kernel", "ext4", 4096, Instant.EPOCH));
    }

    @Test
    void ratiosDivideKvtierByRedis() {
        assertThat(Comparison.ratio(300, 200)).isEqualTo(1.5);
        assertThat(Comparison.ratio(1, 0)).isInfinite();
        assertThat(Comparison.ratio(0, 0)).isNaN();
        assertThat(Comparison.ratio(Double.NaN, 2)).isNaN();
    }

    @Test
    void averagesRoundsAndPoolsHitsOverAllLookups() {
        Measurement m = Measurement.average(List.of(row("overflow", "GET", 100, 2, 30, 10),
                row("overflow", "GET", 300, 4, 10, 50)));

        assertThat(m.rounds()).isEqualTo(2);
        assertThat(m.mbPerSec()).isCloseTo(200, within(1e-6));
        assertThat(m.p99Ms()).isCloseTo(3, within(1e-6));
        assertThat(m.hitRate()).isCloseTo(40.0 / 100, within(1e-9));
        assertThat(m.histogram().getTotalCount()).isEqualTo(2);
    }

    @Test
    void averageOfNoRoundsIsAnError() {
        assertThatThrownBy(() -> Measurement.average(List.of())).hasMessageContaining("no rounds");
    }

    @Test
    void groupsPassesIntoOneComparisonPerCaseAndDropsOneSidedCases() {
        List<Comparison> comparisons = Comparisons.of(List.of(
                pass(Server.KVTIER, 1, Double.NaN, row("setget", "SET", 400, 1, 0, 0), row("setget", "GET", 800, 1,
                        5, 0)),
                pass(Server.REDIS, 1, Double.NaN, row("setget", "SET", 200, 2, 0, 0), row("setget", "GET", 400, 2,
                        5, 0)),
                pass(Server.KVTIER, 2, Double.NaN, row("setget", "SET", 600, 1, 0, 0), row("setget", "GET", 800, 1,
                        5, 0)),
                pass(Server.REDIS, 2, Double.NaN, row("setget", "SET", 200, 2, 0, 0), row("setget", "GET", 400, 2,
                        5, 0)),
                pass(Server.KVTIER, 1, 4.0, row("overflow", "GET", 100, 1, 10, 0))));

        assertThat(comparisons).extracting(c -> c.key().op()).containsExactly("SET", "GET");
        assertThat(comparisons.getFirst().throughputRatio()).isCloseTo(2.5, within(1e-9));
        assertThat(comparisons.getFirst().p99Ratio()).isCloseTo(0.5, within(1e-9));
        assertThat(comparisons.get(1).hitRateRatio()).isEqualTo(1.0);
    }

    @Test
    void holdsMemoryTrafficAgainstLoopbackAndDiskServedReadsAgainstRandomReads() {
        MachineLimitsResult limits = limits(4_000_000_000L, 1_000_000_000L);
        Comparison setget = new Comparison(new CaseKey("setget", 1 << 20, "GET", 4, Double.NaN),
                Measurement.average(List.of(row("setget", "GET", 2000, 1, 1, 0))),
                Measurement.average(List.of(row("setget", "GET", 1000, 1, 1, 0))));
        Comparison overflow = new Comparison(new CaseKey("overflow", 1 << 20, "GET", 16, 4.0),
                Measurement.average(List.of(row("overflow", "GET", 700, 1, 1, 0))),
                Measurement.average(List.of(row("overflow", "GET", 1000, 1, 1, 0))));

        Comparison.Limit loopback = setget.limit(limits).orElseThrow();
        Comparison.Limit disk = overflow.limit(limits).orElseThrow();

        assertThat(loopback.name()).isEqualTo("loopback 1 stream");
        assertThat(setget.kvtierPercentOf(loopback)).isCloseTo(50, within(1e-9));
        assertThat(disk.name()).isEqualTo("disk random read");
        assertThat(overflow.kvtierPercentOf(disk)).isCloseTo(70, within(1e-9));
    }
}
