package io.kvtier.bench.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BenchResultJsonTest {

    static BenchResult sample() {
        Histogram h = Latency.newHistogram();
        for (int i = 1; i <= 100; i++) {
            Latency.recordNanos(h, i * 1_000_000L);
        }
        OpResult get = new OpResult("setget", 1 << 20, "GET", 100, 2.5, 100L << 20, 98, 2, 0, 0, "",
                Latency.summarize(h), Latency.encode(h));
        OpResult set = new OpResult("setget", 1 << 20, "SET", 100, 2.25, 100L << 20, 0, 0, 1, 0,
                "ERR \"quoted\"\nand a line break, with commas", LatencySummary.EMPTY, "");
        RunInfo run = new RunInfo("2026-11-22T10:15:30Z", "127.0.0.1:6379", "setget", 4, 2, Double.NaN, true,
                Long.MIN_VALUE + 7, RunInfo.latencyNote(4, 2, Double.NaN),
                Map.of("valueSizes", "1 MiB", "limit", "10s"));
        return new BenchResult(run, List.of(set, get));
    }

    @Test
    void aResultReadsBackEqualToWhatWasWritten(@TempDir Path dir) throws Exception {
        BenchResult result = sample();
        Path file = dir.resolve("setget.json");
        BenchResultJson.write(result, file);
        assertThat(BenchResultJson.read(file)).isEqualTo(result);
    }

    @Test
    void anOpenLoopRateAndLargeSeedsSurviveTheRoundTrip() {
        BenchResult result = sample();
        RunInfo open = new RunInfo(result.run().startedAt(), result.run().target(), "lmcache", 16, 1, 1234.5, false,
                Long.MAX_VALUE, RunInfo.latencyNote(16, 1, 1234.5), Map.of());
        BenchResult back = BenchResultJson.parse(BenchResultJson.toJson(new BenchResult(open, result.results())));
        assertThat(back.run().rate()).isEqualTo(1234.5);
        assertThat(back.run().openLoop()).isTrue();
        assertThat(back.run().seed()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void writesDerivedFiguresAndNullsWhereThereIsNothingToMeasure() {
        String json = BenchResultJson.toJson(sample());
        assertThat(json).contains("\"schema\": \"kvtier-bench/1\"", "\"loop\": \"closed\"", "\"rate\": null",
                "\"opsPerSec\": 40.0", "\"hitRate\": 0.98", "\"hitRate\": null", "\"p50\": null",
                "\"firstError\": null");
    }

    @Test
    void theHistogramInTheFileGivesTheReportedPercentiles() {
        BenchResult back = BenchResultJson.parse(BenchResultJson.toJson(sample()));
        OpResult get = back.results().get(1);
        Histogram h = Latency.decode(get.histogram());
        assertThat(Latency.summarize(h)).isEqualTo(get.latencyMs());
    }

    @Test
    void anotherSchemaIsRefusedByName() {
        String json = BenchResultJson.toJson(sample()).replace("kvtier-bench/1", "kvtier-bench/9");
        assertThatThrownBy(() -> BenchResultJson.parse(json)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("unknown schema 'kvtier-bench/9', expected kvtier-bench/1");
    }

    @Test
    void aMissingMemberIsNamed() {
        String json = BenchResultJson.toJson(sample()).replace("\"count\"", "\"kount\"");
        assertThatThrownBy(() -> BenchResultJson.parse(json)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'count'");
    }

    @Test
    void unknownMembersAreIgnoredSoLaterVersionsCanAddSome() {
        String json = BenchResultJson.toJson(sample()).replace("\"op\": \"GET\",", "\"op\": \"GET\", \"new\": [1, {}],");
        assertThat(BenchResultJson.parse(json)).isEqualTo(sample());
    }

    @Test
    void truncatedJsonIsAnError(@TempDir Path dir) throws Exception {
        String json = BenchResultJson.toJson(sample());
        Path file = dir.resolve("cut.json");
        Files.writeString(file, json.substring(0, json.length() / 2));
        assertThatThrownBy(() -> BenchResultJson.read(file)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("bad JSON");
    }
}
