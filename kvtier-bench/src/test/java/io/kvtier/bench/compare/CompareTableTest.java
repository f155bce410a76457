package io.kvtier.bench.compare;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class CompareTableTest {
    @Test
    void printsBothSystemsTheRatioAndTheShareOfTheLimit() {
        Comparison c = new Comparison(new CaseKey("setget", 1 << 20, "GET", 16, Double.NaN),
                Measurement.average(List.of(ComparisonTest.row("setget", "GET", 3000, 2, 10, 0))),
                Measurement.average(List.of(ComparisonTest.row("setget", "GET", 2000, 4, 10, 0))));
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();

        CompareTable.print(List.of(c), Optional.of(ComparisonTest.limits(4_000_000_000L, 1)),
                new PrintStream(bytes, true, StandardCharsets.UTF_8));

        String row = bytes.toString(StandardCharsets.UTF_8).lines().skip(1).findFirst().orElseThrow();
        assertThat(row).contains("setget", "1MiB", "GET", "16", "3000.0", "2000.0", "1.50", "0.50", "100.0",
                "75% of loopback 1 stream");
    }

    @Test
    void formatsMissingAndInfiniteFigures() {
        assertThat(CompareTable.fixed(Double.NaN, 2)).isEqualTo("-");
        assertThat(CompareTable.fixed(Double.POSITIVE_INFINITY, 2)).isEqualTo("inf");
        assertThat(CompareTable.percent(0.25)).isEqualTo("25.0");
    }
}
