package io.kvtier.bench.compare;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link SmallValues#parse} on what redis-benchmark 7.0.15 printed with {@code --csv}. */
class SmallValuesTest {
    private static final String HEADER = "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\","
            + "\"p95_latency_ms\",\"p99_latency_ms\",\"max_latency_ms\"\n";

    @Test
    void readsEachTestsRateAndLatencies() throws IOException {
        List<SmallValues.Row> rows = SmallValues.parse(HEADER
                + "\"SET\",\"20408.16\",\"0.147\",\"0.040\",\"0.127\",\"0.223\",\"0.575\",\"3.951\"\n"
                + "\"GET\",\"22727.27\",\"0.126\",\"0.048\",\"0.127\",\"0.207\",\"0.279\",\"0.399\"\n"
                + "\"MSET (10 keys)\",\"20202.02\",\"0.141\",\"0.040\",\"0.135\",\"0.231\",\"0.295\",\"0.999\"\n");
        assertThat(rows).containsExactly(
                new SmallValues.Row("SET", 20408.16, 0.147, 0.127, 0.575, 3.951),
                new SmallValues.Row("GET", 22727.27, 0.126, 0.127, 0.279, 0.399),
                new SmallValues.Row("MSET (10 keys)", 20202.02, 0.141, 0.135, 0.295, 0.999));
    }

    @Test
    void namesACustomCommandByItsLine() throws IOException {
        assertThat(SmallValues.parse(HEADER + "\"MGET key:__rand_int__ key:__rand_int__\",\"22222.22\",\"0.129\","
                + "\"0.040\",\"0.127\",\"0.215\",\"0.287\",\"0.575\"\n")).singleElement()
                .satisfies(r -> assertThat(r.test()).isEqualTo("MGET key:__rand_int__ key:__rand_int__"));
    }

    @Test
    void refusesOutputWithoutResults() {
        assertThatThrownBy(() -> SmallValues.parse("Error from server: ERR unknown command\n"))
                .isInstanceOf(IOException.class).hasMessageContaining("printed no result");
        assertThatThrownBy(() -> SmallValues.parse(HEADER + "\"SET\",\"fast\",\"0.1\",\"0\",\"0\",\"0\",\"0\",\"0\"\n"))
                .isInstanceOf(IOException.class).hasMessageContaining("unexpected redis-benchmark line");
    }
}
