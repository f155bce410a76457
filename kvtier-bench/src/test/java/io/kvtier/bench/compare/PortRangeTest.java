package io.kvtier.bench.compare;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** --port-range: every port a benchmark picks (and the neighbours it takes too) falls in the range. */
class PortRangeTest {
    @AfterEach
    void restore() {
        ServerProcess.usePortRange(20_000, 32_099);
    }

    @Test
    void portsAndPairsComeFromTheRange() throws Exception {
        ServerProcess.usePortRange("41000-41399");
        for (int i = 0; i < 50; i++) {
            int p = ServerProcess.freePort();
            assertThat(p).isBetween(41_000, 41_299);
            assertThat(p + 100).isLessThanOrEqualTo(41_399);
            int pair = ServerProcess.freePair();
            assertThat(pair).isBetween(41_000, 41_299); // picked as freePort's, with pair + 1 free too
            assertThat(pair + 1).isLessThanOrEqualTo(41_399);
        }
    }

    @Test
    void aBadRangeIsRefusedByName() {
        assertThatThrownBy(() -> ServerProcess.usePortRange("41000")).hasMessageContaining("give LOW-HIGH");
        assertThatThrownBy(() -> ServerProcess.usePortRange("41000-41100")).hasMessageContaining("at least 300 ports");
        assertThatThrownBy(() -> ServerProcess.usePortRange("80-1000")).hasMessageContaining("1024..65535");
    }
}
