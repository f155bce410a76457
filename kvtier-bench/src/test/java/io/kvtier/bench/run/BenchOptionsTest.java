package io.kvtier.bench.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.bench.load.Limit;
import io.kvtier.bench.workload.LmcacheSpec;
import io.kvtier.bench.workload.OverflowSpec;
import io.kvtier.bench.workload.SetGetSpec;
import java.time.Duration;
import java.util.List;
import java.util.OptionalDouble;
import org.junit.jupiter.api.Test;

class BenchOptionsTest {

    private static BenchOptions.Builder setget() {
        return BenchOptions.builder(new SetGetSpec());
    }

    @Test
    void defaultsAreTheDocumentedOnes() {
        BenchOptions o = setget().build();
        assertThat(o.target()).isEqualTo("127.0.0.1:6379");
        assertThat(o.connections()).isEqualTo(4);
        assertThat(o.pipeline()).isEqualTo(1);
        assertThat(o.valueSizes()).containsExactly(256 << 10, 1 << 20, 4 << 20, 32 << 20);
        assertThat(o.limit()).isEqualTo(new Limit.Timed(Duration.ofSeconds(10)));
        assertThat(o.warmUp()).isEqualTo(new Limit.Timed(Duration.ofSeconds(2)));
        assertThat(o.rate()).isEmpty();
        assertThat(o.verify()).isFalse();
        assertThat(BenchOptions.builder(new OverflowSpec(1 << 30, 4)).build().valueSizes()).containsExactly(1 << 20);
    }

    @Test
    void theRunParametersNameTheClusterOnlyWhenItIsOne() {
        assertThat(BenchRun.runInfo(setget().build(), "now").parameters()).doesNotContainKey("cluster");
        assertThat(BenchRun.runInfo(setget().cluster(true).build(), "now").parameters()).containsEntry("cluster", "true");
    }

    @Test
    void lmcacheRunsItsChunkSize() {
        LmcacheSpec spec = new LmcacheSpec("m", "", 256, 1 << 20, 1024, 1, 64, 1, 128, 256, 8192, "metadata");
        assertThat(BenchOptions.builder(spec).build().valueSizes()).containsExactly(1 << 20);
    }

    @Test
    void messagesNameTheFlagTheValueAndTheLimit() {
        assertThatThrownBy(() -> setget().connections(0).build()).hasMessage("--connections 0 is below the minimum 1");
        assertThatThrownBy(() -> setget().pipeline(2000).build())
                .hasMessage("--pipeline 2000 is above the maximum 1024");
        assertThatThrownBy(() -> setget().port(70000).build()).hasMessage("--port 70000 is above the maximum 65535");
        assertThatThrownBy(() -> setget().valueSizes(List.of(1 << 30)).build())
                .hasMessage("--value-size 1 GiB is above the maximum 512 MiB");
        assertThatThrownBy(() -> setget().valueSizes(List.of()).build())
                .hasMessage("--value-size needs at least one size");
        assertThatThrownBy(() -> setget().rate(OptionalDouble.of(0)).build())
                .hasMessage("--rate 0.0 is below the minimum 0.001");
        assertThatThrownBy(() -> setget().limit(new Limit.Requests(0)).build())
                .hasMessage("--requests 0 is below the minimum 1");
        assertThatThrownBy(() -> setget().limit(new Limit.Timed(Duration.ofDays(2))).build())
                .hasMessage("--duration 172800s is above the maximum 24h");
        assertThatThrownBy(() -> setget().timeout(Duration.ZERO).build())
                .hasMessage("--timeout 0ms is outside 1ms..24h");
        assertThatThrownBy(() -> setget().host(" ").build()).hasMessage("--host must not be empty");
    }

    @Test
    void verifiedValuesMustHoldTheirHeader() {
        assertThat(setget().valueSizes(List.of(8)).build().valueSizes()).containsExactly(8);
        assertThatThrownBy(() -> setget().valueSizes(List.of(8)).verify(true).build())
                .hasMessage("--value-size 8 B is below the minimum 16 B");
    }

    @Test
    void aWarmUpMayBeNone() {
        assertThat(setget().warmUp(Limit.none()).build().warmUp().isNone()).isTrue();
    }

    @Test
    void theOverflowWorkingSetMustFit() {
        assertThatThrownBy(() -> BenchOptions.builder(new OverflowSpec(1L << 40, 100)).valueSizes(List.of(1024))
                .build()).hasMessageContaining("above the maximum 100000000");
    }

    @Test
    void thePasswordStaysOutOfToString() {
        assertThat(setget().password("sekrit").build().toString()).doesNotContain("sekrit").contains("***");
    }
}
