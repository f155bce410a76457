package io.kvtier.kvcache.sizing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** GPU memory, tiers and the suggestion for llama-3.1-8b on one 80 GiB GPU, computed by hand. */
class SizingReportTest {
    private static final long GIB = 1L << 30;

    private static SizingOptions options(int tp, int gpus, long target) {
        return new SizingOptions(null, null, tp, 256, 80 * GIB, gpus, 0.9, 4 * GIB, 128 * GIB, 1024 * GIB, 8192,
                target);
    }

    @Test
    void llama8bOnOne80GibGpu() {
        SizingReport r = SizingReport.of(ModelTable.find("llama-3.1-8b"), options(1, 1, 0));
        long weights = 2 * 8_029_995_008L;                                    // bf16
        assertThat(r.gpu().usable()).isEqualTo(77_309_411_328L);               // 0.9 x 80 GiB
        assertThat(r.gpu().weights()).isEqualTo(weights);
        assertThat(r.gpu().kv()).isEqualTo(77_309_411_328L - weights - 4 * GIB);  // 56,954,454,016
        assertThat(r.maxSequences()).isEqualTo(53);                            // 1 GiB per 8,192-token sequence
        assertThat(r.hbm().tokens()).isEqualTo(434_528);                       // KV / 131,072
        assertThat(r.dram()).isEqualTo(new SizingReport.Tier("DRAM", 128 * GIB, 1_048_576, 4096, 128));
        assertThat(r.ssd().sequences()).isEqualTo(1024);
        assertThat(r.suggestion().flags()).isEqualTo("--memory 128g --disk 1024g");
        assertThat(r.suggestion().sequences()).isEqualTo(1024);
    }

    @Test
    void targetGoesWholeOnDiskAndInMemoryAsFarAsDramAllows() {
        SizingReport r = SizingReport.of(ModelTable.find("llama-3.1-8b"), options(1, 1, 100));
        assertThat(r.suggestion().bytes()).isEqualTo(100 * GIB);               // 100 x 32 chunks of 32 MiB
        assertThat(r.suggestion().flags()).isEqualTo("--memory 100g --disk 100g");
        SizingReport big = SizingReport.of(ModelTable.find("llama-3.1-8b"), options(1, 1, 2000));
        assertThat(big.suggestion().flags()).isEqualTo("--memory 128g --disk 1024g");
        assertThat(big.suggestion().shortfall()).isEqualTo((2000 - 1024) * GIB);
    }

    @Test
    void instancesMultiplyWhatTheNodeHolds() {
        SizingReport r = SizingReport.of(ModelTable.find("llama-3.1-70b"), options(4, 8, 0));
        long weights = ModelTable.find("llama-3.1-70b").weightBytes();
        long kvPerGpu = 77_309_411_328L - (weights + 3) / 4 - 4 * GIB;
        assertThat(r.gpu().kv()).isEqualTo(kvPerGpu);
        assertThat(r.maxSequences()).isEqualTo(2 * (kvPerGpu / (81_920L * 8192)));
        assertThat(r.dram().chunks()).isEqualTo(128 * GIB / 20_971_520);       // 20 MiB per worker's chunk
        assertThat(r.dram().tokens()).isEqualTo(128 * GIB / 20_971_520 / 4 * 256);
    }

    @Test
    void weightsThatDoNotFitLeaveNoRoomForKv() {
        SizingReport r = SizingReport.of(ModelTable.find("llama-3.1-405b"), options(1, 1, 0));
        assertThat(r.gpu().weightsFit()).isFalse();
        assertThat(r.gpu().kv()).isZero();
        assertThat(r.maxSequences()).isZero();
    }

    @Test
    void optionsNameTheFlagAndTheLimit() {
        assertThatThrownBy(() -> options(2, 1, 0)).hasMessage("--gpus 1 is below the minimum 2 (--tp 2: one model "
                + "instance spans 2 GPUs)");
        assertThatThrownBy(() -> new SizingOptions(Precision.INT4, null, 1, 256, 80 * GIB, 1, 0.9, 0, 0, 0, 8192, 0))
                .hasMessage("--dtype int4 is not a KV-cache dtype (bf16, fp16, fp8, fp32)");
        assertThatThrownBy(() -> new SizingOptions(null, null, 1, 0, 80 * GIB, 1, 0.9, 0, 0, 0, 8192, 0))
                .hasMessage("--chunk-tokens 0 is below the minimum 1");
        assertThatThrownBy(() -> new SizingOptions(null, null, 1, 256, 80 * GIB, 1, 1.5, 0, 0, 0, 8192, 0))
                .hasMessage("--gpu-memory-utilization 1.5 is outside (0, 1]");
    }
}
