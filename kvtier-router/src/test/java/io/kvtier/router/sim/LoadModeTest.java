package io.kvtier.router.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The load modes' names and the layerwise pipeline's length. */
class LoadModeTest {
    @Test
    void aLayerwiseStepOverlapsAllButOneLayerOfTheShorterPart() {
        // 32 layers: a load of 320 and a compute of 32 take 10 + 31 x 10 + 1, not 352 as one after the other
        assertThat(LoadMode.pipelined(320, 32, 32)).isEqualTo(321);
        assertThat(LoadMode.pipelined(32, 320, 32)).isEqualTo(321);
        assertThat(LoadMode.pipelined(320, 320, 32)).isEqualTo(330);
        assertThat(LoadMode.pipelined(320, 0, 32)).as("no compute: the load alone").isEqualTo(320);
        assertThat(LoadMode.pipelined(320, 32, 1)).as("one layer: no overlap").isEqualTo(352);
    }

    @Test
    void namesAreTheFlagsValues() {
        assertThat(LoadMode.of("Async")).isEqualTo(LoadMode.ASYNC);
        assertThat(LoadMode.LAYERWISE.label()).isEqualTo("layerwise");
        assertThatThrownBy(() -> LoadMode.of("eager")).hasMessageContaining("choose sync, async or layerwise");
    }

    @Test
    void onlyATransfersPerBytePartIsScaledUp() {
        // measured 10 ms, 4 of them round trips, a quarter of the bytes moved: 4 + 6 x 4
        assertThat(ChunkOffload.modeled(10_000_000, 4_000_000, 0.25)).isEqualTo(28_000_000);
        assertThat(ChunkOffload.modeled(10_000_000, 4_000_000, 1.0)).isEqualTo(10_000_000);
        assertThat(ChunkOffload.modeled(10_000_000, 12_000_000, 0.25)).as("round trips at most the whole")
                .isEqualTo(10_000_000);
        assertThat(ChunkOffload.modeled(10_000_000, -1, 0.5)).isEqualTo(20_000_000);
    }
}
