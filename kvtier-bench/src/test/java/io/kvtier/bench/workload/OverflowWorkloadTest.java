package io.kvtier.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class OverflowWorkloadTest {

    @Test
    void theWorkingSetIsFactorTimesTheBudgetInValues() {
        OverflowSpec spec = new OverflowSpec(64L << 20, 4);
        assertThat(spec.keys(1 << 20)).isEqualTo(256);
        assertThat(new OverflowSpec(1000 * 1024, 1.5).keys(1 << 20)).isEqualTo(2);
    }

    @Test
    void theReadOrderIsASeededPermutationOfEveryKey() {
        int[] order = OverflowWorkload.permutation(1000, 3);
        assertThat(Arrays.stream(order).sorted().toArray()).isEqualTo(IntStream.range(0, 1000).toArray());
        assertThat(order).isEqualTo(OverflowWorkload.permutation(1000, 3));
        assertThat(order).isNotEqualTo(OverflowWorkload.permutation(1000, 4));
        assertThat(order).isNotEqualTo(IntStream.range(0, 1000).toArray());
    }

    @Test
    void messagesNameTheFlags() {
        assertThatThrownBy(() -> new OverflowSpec(16, 4)).hasMessage("--memory-budget 16 B is below the minimum 1 KiB");
        assertThatThrownBy(() -> new OverflowSpec(1 << 20, 0)).hasMessage("--factor 0.0 is below the minimum 0.01");
        assertThatThrownBy(() -> new OverflowSpec(1L << 40, 1000).checkFits(16))
                .hasMessageStartingWith("--factor 1000.0 x --memory-budget 1 TiB is ")
                .hasMessageEndingWith("above the maximum 100000000; use a larger --value-size");
    }
}
