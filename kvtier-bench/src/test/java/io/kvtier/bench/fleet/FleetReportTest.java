package io.kvtier.bench.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.common.Json;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FleetReportTest {
    @TempDir
    Path dir;

    /** Three configurations at three rates: offload makes TTFT shorter and serves tokens from memory and disk. */
    static List<FleetPoint> points() {
        List<FleetPoint> points = new ArrayList<>();
        String[][] configs = {{"none", "direct"}, {"dram", "direct"}, {"dram+ssd", "prefix"}};
        double[] ttftScale = {1, 0.6, 0.5};
        for (int c = 0; c < configs.length; c++) {
            for (double rate : new double[] {0.5, 1, 2}) {
                List<RequestResult> results = new ArrayList<>();
                for (int i = 1; i <= 20 * rate; i++) {
                    results.add(LatencyStatsTest.ok(i * 10 * rate * ttftScale[c], 20 + rate * 5));
                }
                if (rate == 2) {
                    results.add(LatencyStatsTest.failed("HTTP 503: overloaded, \"try later\""));
                }
                long prompt = 1_000_000;
                long gpu = 300_000;
                long memory = c == 0 ? 0 : Math.round(200_000 / rate);
                long disk = c == 2 ? 100_000 : 0;
                FleetTimeline timeline = c == 2 && rate == 2 ? FleetTimelineTest.killed() : FleetTimeline.EMPTY;
                points.add(new FleetPoint(configs[c][0], configs[c][1], rate + " req/s", rate, 4,
                        LatencyStats.of(results, 10), new EngineCounters(prompt, gpu, memory, disk,
                                prompt - gpu - memory - disk, memory * 131_072, 2_000_000_000L, 0, 0, 3, 7.5,
                                memory == 0 ? 0 : 2.0, memory == 0 ? Double.NaN : memory * 131_072 / 2.0, 0.01),
                        timeline, c == 2 ? new ReuseCeiling(okCount(results) * 100, okCount(results) * 50)
                                : ReuseCeiling.NONE));
            }
        }
        return points;
    }

    private static long okCount(List<RequestResult> results) {
        return results.stream().filter(RequestResult::ok).count();
    }

    static final FleetReport.RunInfo RUN = new FleetReport.RunInfo("kvtier bench fleet --rates 0.5,1,2",
            "test machine, H100 modeled", "2026-12-01T10:15:30Z", "Modeled: GPU step times. Measured: the rest.");

    @Test
    void writesJsonCsvAndTheTable() throws IOException {
        List<FleetPoint> points = points();
        String table = FleetReport.write(dir.resolve("out"), RUN, points);

        assertThat(dir.resolve("out/fleet.txt")).hasContent(table.stripTrailing());
        Map<?, ?> root = (Map<?, ?>) Json.parse(Files.readString(dir.resolve("out/fleet.json")));
        assertThat(root.get("schema")).isEqualTo(FleetReport.SCHEMA);
        assertThat(((Map<?, ?>) root.get("run")).get("machine")).isEqualTo("test machine, H100 modeled");
        List<?> json = (List<?>) root.get("points");
        assertThat(json).hasSize(9);
        Map<?, ?> last = (Map<?, ?>) json.getLast();
        assertThat(last.get("config")).isEqualTo("kvtier dram+ssd / prefix");
        assertThat(((BigDecimal) last.get("rpsPerGpu")).doubleValue()).isEqualTo(1.0); // 40 requests, 10 s, 4 GPUs
        Map<?, ?> latency = (Map<?, ?>) last.get("latency");
        assertThat(latency.get("errors")).isEqualTo(BigDecimal.ONE);
        assertThat(latency.get("firstErrors")).isEqualTo(List.of("HTTP 503: overloaded, \"try later\""));
        assertThat(latency.keySet().stream().map(Object::toString).toList()).contains("ttftP50", "ttftP90", "ttftP99", "tpotP50", "tokensPerSecondPerUser",
                "e2eP90", "outputTokensPerSecond", "measuredSeconds");
        Map<?, ?> counters = (Map<?, ?>) last.get("counters");
        assertThat(((BigDecimal) counters.get("diskHitRate")).doubleValue()).isEqualTo(0.1);
        Map<?, ?> ceiling = (Map<?, ?>) last.get("ceiling");
        assertThat(((BigDecimal) ceiling.get("share")).doubleValue()).isEqualTo(0.5); // 50 of each 100 tokens
        assertThat(((BigDecimal) ceiling.get("reached")).doubleValue()).isEqualTo(0.8); // 40 cached of those 50
        assertThat(((Map<?, ?>) ((Map<?, ?>) json.getFirst()).get("ceiling")).get("share")).isNull(); // none computed
        Map<?, ?> timeline = (Map<?, ?>) last.get("timeline");
        assertThat(timeline.get("killed")).isEqualTo("n3");
        assertThat(((BigDecimal) timeline.get("killedAtSeconds")).doubleValue()).isEqualTo(5.5);
        assertThat((List<?>) timeline.get("buckets")).hasSize(10);
        assertThat(((Map<?, ?>) ((List<?>) timeline.get("buckets")).get(6)).get("errors")).isEqualTo(BigDecimal.ONE);
        Map<?, ?> quiet = (Map<?, ?>) ((Map<?, ?>) json.getFirst()).get("timeline");
        assertThat(quiet.get("killed")).isNull();
        assertThat(quiet.get("killedAtSeconds")).isNull(); // NaN
        assertThat(counters.keySet().stream().map(Object::toString).toList()).contains("recomputedTokens", "bytesRead", "storesDropped", "stepLagSeconds", "loadSeconds",
                "fetchBytesPerSecond");

        List<String> csv = Files.readAllLines(dir.resolve("out/fleet.csv"));
        assertThat(csv).hasSize(1 + 9);
        List<String> header = List.of(csv.getFirst().split(","));
        assertThat(header).startsWith("config", "offload", "routing", "rateLabel", "offeredRps", "gpus", "rpsPerGpu")
                .contains("latency.ttftP99", "counters.gpuHitRate", "latency.firstErrors")
                .noneMatch(column -> column.startsWith("timeline"));
        assertThat(csv.get(1)).startsWith("no offload / direct,none,direct,0.5 req/s,0.5,4,0.25,10,0,");
        assertThat(csv.getLast()).contains(",\"HTTP 503: overloaded, \"\"try later\"\"\"");
        assertThat(csv.get(1).split(",", -1)).hasSameSizeAs(header); // no quoted commas in this row
    }

    @Test
    void theTableHasOneRowPerPointAndTheFirstErrors() {
        String table = FleetReport.table(points());
        List<String> lines = table.lines().toList();

        assertThat(lines.get(0)).startsWith("config").contains("req/s/GPU", "TPS/user", "TTFT p50", "TTFT p99",
                "TPOT p50", "GPU%", "mem%", "disk%", "ceil%", "reach%", "recomputed", "MB read", "MB written", "fetch", "errors");
        assertThat(lines.subList(2, 11)).allSatisfy(l -> assertThat(l).contains(" / "));
        assertThat(lines.get(2)).startsWith("no offload / direct").contains("  30.0    0.0    0.0      -      -       700000 ")
                .endsWith("      -       0"); // no fetches: no fetch rate
        assertThat(lines.get(5)).startsWith("kvtier dram / direct").contains(" 26.21 "); // 52.4 GB read in 2 s of loading
        assertThat(lines.get(10)).startsWith("kvtier dram+ssd / prefix").endsWith(" 1");
        assertThat(lines.get(11)).isEqualTo("n3 killed (SIGKILL) 5.5 s into kvtier dram+ssd / prefix at 2.0 req/s: "
                + "worst TTFT p90 of a 1 s bucket 0.100 s before, 2.000 s after; 1 errors in the point");
        assertThat(lines.subList(12, lines.size())).hasSize(3)
                .allSatisfy(l -> assertThat(l).startsWith("first error of ").endsWith("\"try later\""));
    }

    @Test
    void anEmptySweepStillWritesAHeader() {
        assertThat(FleetReport.toCsv(List.of()).lines().toList()).hasSize(1);
        assertThat(FleetReport.table(List.of()).lines().toList()).hasSize(2);
    }

    @Test
    void theMachineIsDescribed() {
        assertThat(FleetReport.machine()).contains("CPUs").contains("JDK");
    }
}
