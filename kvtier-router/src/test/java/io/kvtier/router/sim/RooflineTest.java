package io.kvtier.router.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.kvtier.kvcache.sizing.Attention;
import io.kvtier.kvcache.sizing.ModelSpec;
import io.kvtier.kvcache.sizing.ModelTable;
import io.kvtier.kvcache.sizing.Precision;
import org.junit.jupiter.api.Test;

/**
 * The roofline's arithmetic against values worked out by hand for a round model: 8e9 parameters in bf16 (16e9 bytes of
 * weights), 32 layers, 32 heads of 128, 8 KV heads: 32 * 2 * 8 * 128 * 2 = 131,072 KV bytes per token. On an H100
 * (989 TFLOP/s, 3,350 GB/s) at 50% compute and 80% memory efficiency, no overheads.
 */
class RooflineTest {
    private static final ModelSpec ROUND = new ModelSpec("round-8b", "test", Attention.full(32, 32, 8, 128),
            8_000_000_000L, 0, Precision.BF16, Precision.BF16, Precision.BF16);

    private static Roofline h100(int tp) {
        return new Roofline(ROUND, Gpu.H100, tp, Precision.BF16, 0.5, 0.8, 0, tp == 1 ? 0 : 8e-6);
    }

    @Test
    void decodeOfOneRequestIsBoundByReadingTheWeights() {
        // FLOPs 2*8e9 + 4*32*32*128*1000 = 1.6524e10 -> 33 us of compute; bytes 16e9 + 131072*(1000 + 1) read and
        // written = 1.61312e10 -> 16.1312e9 / 2.68e12 = 6.0191 ms: memory-bound.
        StepBatch b = StepBatch.EMPTY.plusDecode(999);
        assertThat(h100(1).kvBytesPerTokenPerGpu()).isEqualTo(131_072);
        assertThat(h100(1).flops(b)).isEqualTo(16_524_288_000.0);
        assertThat(h100(1).bytesPerGpu(b)).isEqualTo(16_131_203_072.0);
        assertThat(h100(1).seconds(b)).isCloseTo(6.0191056e-3, within(1e-9));
    }

    @Test
    void prefillOfALongPromptIsBoundByArithmetic() {
        // 4096 tokens from 0: FLOPs 2*8e9*4096 + 4*32*32*128*(4096*4097/2) = 6.9935120252928e13 -> / 494.5e12 =
        // 141.43 ms; bytes 16e9 + 131072*4096 = 1.6537e10 -> 6.17 ms.
        StepBatch b = StepBatch.EMPTY.plusPrefill(0, 4096);
        assertThat(b.prefillAttention()).isEqualTo(4096L * 4097 / 2);
        assertThat(h100(1).flops(b)).isEqualTo(69_935_120_252_928.0);
        assertThat(h100(1).seconds(b)).isCloseTo(0.14142593, within(1e-8));
    }

    @Test
    void aLargeDecodeBatchReadsTheKvOfEveryRequest() {
        // 64 requests at 2000 tokens of context: bytes 16e9 + 131072*(64*2000 + 64) = 3.2785e10 -> 12.233 ms; compute
        // 2.2 ms.
        StepBatch b = StepBatch.EMPTY;
        for (int i = 0; i < 64; i++) {
            b = b.plusDecode(1999);
        }
        assertThat(h100(1).seconds(b)).isCloseTo(0.012233435, within(1e-8));
    }

    @Test
    void tensorParallelismSplitsTheWorkAndAddsAllReduces() {
        // tp 2: the same decode reads 8e9 bytes of weights and half the KV per GPU, plus 64 all-reduces of
        // 4096 * 2 bytes: 64 * (8192 / 450e9 + 8 us) = 0.51317 ms.
        StepBatch b = StepBatch.EMPTY.plusDecode(999);
        assertThat(h100(2).kvBytesPerTokenPerGpu()).isEqualTo(65_536);
        assertThat(h100(2).communicationSeconds(b)).isCloseTo(5.131651e-4, within(1e-9));
        double memory = (8e9 + 65_536.0 * 1001) / 2.68e12;
        assertThat(h100(2).seconds(b)).isCloseTo(memory + 5.131651e-4, within(1e-9));
    }

    @Test
    void anEmptyStepTakesNoTimeAndOverheadIsAdded() {
        Roofline r = new Roofline(ROUND, Gpu.L4, 1, Precision.BF16, 0.5, 0.8, 1e-3, 0);
        assertThat(r.seconds(StepBatch.EMPTY)).isZero();
        // L4: 16e9 bytes of weights and 2 tokens of KV (read 1, write 1) / (300e9 * 0.8) = 66.67 ms, plus 1 ms.
        assertThat(r.seconds(StepBatch.EMPTY.plusDecode(0))).isCloseTo(16_000_262_144.0 / 240e9 + 1e-3,
                within(1e-9));
    }

    @Test
    void hbmIsSizedAsVllmSizesIt() {
        // H100: 81,559 MiB * 0.9 - 16e9 bytes of weights - 2 GiB = 58,822,475,366 bytes; a block of 16 tokens is
        // 2 MiB: 28,048 blocks.
        HbmBudget hbm = new HbmBudget(Gpu.H100, 0.9, 16_000_000_000L, 2L << 30, 131_072, 16);
        assertThat(hbm.kvCacheBytes()).isEqualTo((long) ((81_559L << 20) * 0.9) - 16_000_000_000L - (2L << 30));
        assertThat(hbm.blocks()).isEqualTo((int) (hbm.kvCacheBytes() / (2L << 20)));
        assertThat(hbm.blocks()).isBetween(28_000, 28_100);
        // An 8B model in bf16 on an L4 leaves a few GiB; a 70B one does not fit.
        HbmBudget l4 = ModeledEngine.defaults(ModelTable.find("llama-3.1-8b"), Gpu.L4, 1).hbm();
        assertThat(l4.blocks() * 16L).isBetween(10_000L, 60_000L);
        assertThatThrownBy(() -> ModeledEngine.defaults(ModelTable.find("llama-3.1-70b"), Gpu.L4, 1).hbm().blocks())
                .hasMessageContaining("does not fit");
    }

    @Test
    void refusesWhatItCannotModel() {
        assertThatThrownBy(() -> Roofline.calibrated(ModelTable.find("mixtral-8x7b"), Gpu.H100, 1))
                .hasMessageContaining("mixture of experts");
        assertThatThrownBy(() -> Roofline.calibrated(ROUND, Gpu.H100, 3)).hasMessageContaining("--tp 3");
        assertThatThrownBy(() -> Gpu.parse("b200")).hasMessageContaining("l4, a100, h100, h200");
    }
}
