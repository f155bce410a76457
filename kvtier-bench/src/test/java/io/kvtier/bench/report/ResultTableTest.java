package io.kvtier.bench.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class ResultTableTest {

    @Test
    void printsARowPerOperationThenTotalsTheLatencyNoteAndFirstErrors() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ResultTable.print(BenchResultJsonTest.sample(), new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String out = bytes.toString(StandardCharsets.UTF_8);
        assertThat(out.lines().findFirst().orElseThrow()).contains("op", "ops/s", "MB/s", "p50 ms", "p99 ms",
                "p99.9 ms", "max ms", "errors", "misses", "wrong");
        assertThat(out).contains("setget 1 MiB: 0.21 GB moved, GET hit rate 98.0%, read 0.04 GB/s")
                .contains("latency: closed loop (4 connections x 2 in flight): latencies are service times")
                .contains("first error of setget SET: ERR \"quoted\"");
    }

    @Test
    void anLmcacheRequestRowGivesTheChunkHitRate() {
        OpResult request = new OpResult("lmcache", 32 << 20, "request", 10, 1, 3_000_000_000L, 75, 25, 0, 0, "",
                LatencySummary.EMPTY, "");
        assertThat(ResultTable.totals("lmcache 32 MiB", List.of(request)))
                .isEqualTo("lmcache 32 MiB: 3.00 GB moved, chunk hit rate 75.0% (chunks served / chunks needed)");
    }
}
