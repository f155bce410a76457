package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A tiny real {@code ./kvtier bench fleet}, one command as a user runs it: two emulated H100 engines serving
 * multi-round chats directly and through the router's prefix policy, with no offload and with kvtier in DRAM (an
 * eighth of each chunk's bytes moved); the table, JSON, CSV and charts are written, every request completes, and with
 * kvtier the engines load prompt tokens the other engine computed (sent directly, a user's rounds go to either
 * engine). Then a cluster of kvtier nodes loses one mid-point.
 * Long tier (README "Tests"): {@code ./kvtier test -Plong}.
 */
@Tag("long")
class FleetBenchIT {
    @TempDir
    Path out;

    @Test
    void oneCommandWritesTheTableJsonCsvAndCharts() throws Exception {
        List<String> command = new ArrayList<>(List.of(KvtierProcess.ROOT.resolve("kvtier").toString(), "bench", "fleet",
                "--gpu", "h100", "--engines", "2", "--offload", "none,dram", "--routing", "direct,prefix",
                "--rates", "3", "--duration", "8s", "--warm-up", "2s", "--drain", "30s", "--users", "4", "--rounds", "3",
                "--system-prompt", "512", "--history", "512", "--question", "32", "--answer", "8",
                "--kvtier-memory", "2g", "--kv-bytes-scale", "0.125", "--out", out.toString()));
        Process p = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(out.resolve("fleet.log").toFile()).start();
        assertThat(p.waitFor(240, TimeUnit.SECONDS)).as("finished within 4 minutes").isTrue();
        String log = Files.readString(out.resolve("fleet.log"), StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as(log).isZero();

        assertThat(out.resolve("fleet.txt")).isNotEmptyFile();
        assertThat(out.resolve("fleet.csv")).isNotEmptyFile();
        for (String chart : List.of("fleet-rps-vs-tps", "fleet-ttft-p90", "fleet-hit-rate")) {
            assertThat(out.resolve(chart + ".png")).isNotEmptyFile();
            assertThat(out.resolve(chart + ".svg")).isNotEmptyFile();
        }
        JsonNode json = new ObjectMapper().readTree(out.resolve("fleet.json").toFile());
        JsonNode points = json.path("points");
        assertThat(points.size()).as(log).isEqualTo(4);
        long loaded = 0;
        for (JsonNode point : points) {
            assertThat(point.path("latency").path("ok").asLong()).as(point.toString()).isPositive();
            assertThat(point.path("latency").path("errors").asLong()).as(point.toString()).isZero();
            assertThat(point.path("latency").path("ttftP50").asDouble()).as(point.toString()).isPositive();
            assertThat(point.path("counters").path("stepLagSeconds").isNumber()).isTrue();
            if (point.path("offload").asText().equals("dram")) {
                assertThat(point.path("counters").path("bytesWritten").asLong()).as(point.toString()).isPositive();
                loaded += point.path("counters").path("memoryHitTokens").asLong();
            } else {
                assertThat(point.path("counters").path("memoryHitTokens").asLong()).isZero();
            }
        }
        assertThat(loaded).as("prompt tokens loaded from kvtier's memory").isPositive();
    }

    /**
     * kvtier as a three-node cluster with one backup per slot, its last node killed mid-point: the engines reach it
     * as a cluster (slot-routed), every request still completes (a chunk the dead node held is recomputed, and its
     * slots' backups take over), and the point's timeline and chart show the kill.
     */
    @Test
    void aKvtierNodeKilledMidPointCostsNoRequest() throws Exception {
        List<String> command = new ArrayList<>(List.of(KvtierProcess.ROOT.resolve("kvtier").toString(), "bench", "fleet",
                "--gpu", "h100", "--engines", "2", "--offload", "dram", "--routing", "direct", "--rates", "3",
                "--duration", "16s", "--warm-up", "2s", "--drain", "30s", "--users", "4", "--rounds", "3",
                "--system-prompt", "512", "--history", "512", "--question", "32", "--answer", "8",
                "--kvtier-memory", "2g", "--kv-bytes-scale", "0.125", "--kvtier-nodes", "3",
                "--kvtier-failure-timeout", "2s", "--kill-kvtier-after", "8s", "--out", out.toString()));
        Process p = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(out.resolve("fleet.log").toFile()).start();
        assertThat(p.waitFor(240, TimeUnit.SECONDS)).as("finished within 4 minutes").isTrue();
        String log = Files.readString(out.resolve("fleet.log"), StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as(log).isZero();

        JsonNode point = new ObjectMapper().readTree(out.resolve("fleet.json").toFile()).path("points").get(0);
        assertThat(point.path("latency").path("errors").asLong()).as(point.toString()).isZero();
        assertThat(point.path("latency").path("ok").asLong()).as(point.toString()).isPositive();
        assertThat(point.path("counters").path("bytesWritten").asLong()).as(point.toString()).isPositive();
        JsonNode timeline = point.path("timeline");
        assertThat(timeline.path("killed").asText()).isEqualTo("n3");
        assertThat(timeline.path("killedAtSeconds").asDouble()).isBetween(8.0, 10.0);
        long okAfter = 0;
        for (JsonNode bucket : timeline.path("buckets")) {
            if (bucket.path("startSeconds").asDouble() >= 10) {
                okAfter += bucket.path("ok").asLong();
            }
        }
        assertThat(okAfter).as("requests answered after the kill").isPositive();
        assertThat(Files.readString(out.resolve("fleet.txt"))).contains("n3 killed (SIGKILL)");
        assertThat(out.resolve("fleet-kill-kvtier-dram-direct-3-req-s.png")).isNotEmptyFile();
        assertThat(out.resolve("fleet-kill-kvtier-dram-direct-3-req-s.svg")).isNotEmptyFile();
    }
}
