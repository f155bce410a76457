package io.kvtier.router.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.withinPercentage;

import io.kvtier.kvcache.sizing.ModelSpec;
import io.kvtier.kvcache.sizing.ModelTable;
import io.kvtier.kvcache.sizing.Precision;
import org.junit.jupiter.api.Test;

/**
 * The calibrated roofline against published measurements, within 25% (docs/fleet.md, "Calibration", cites each):
 * vLLM's own latency benchmark (batch 8, 32 prompt tokens, 128 output tokens, end to end) for Llama-3-8B on H100,
 * A100 and H200 and for Llama-3-70B at TP 4 on H100; a vLLM decode step at concurrency 1 on H100; and, for prefill, a
 * 5,000-token prompt of Llama-3.3-70B in FP8 at TP 2 on H100 under TensorRT-LLM (NVIDIA NIM; no vLLM figure for a
 * long prompt at batch 1 was found). The model is what the fleet benchmark runs; a change to its constants must keep
 * these.
 */
class CalibrationTest {
    private static final ModelSpec LLAMA_8B = ModelTable.find("llama-3.1-8b");
    private static final ModelSpec LLAMA_70B = ModelTable.find("llama-3.1-70b");

    /** vLLM's benchmark_latency: one prefill step of the batch, then one decode step per further output token. */
    private static double latencyBenchmark(Roofline r, int batch, int input, int output) {
        StepBatch prefill = StepBatch.EMPTY;
        for (int i = 0; i < batch; i++) {
            prefill = prefill.plusPrefill(0, input);
        }
        double seconds = r.seconds(prefill);
        for (int t = 1; t < output; t++) {
            StepBatch decode = StepBatch.EMPTY;
            for (int i = 0; i < batch; i++) {
                decode = decode.plusDecode(input + t - 1);
            }
            seconds += r.seconds(decode);
        }
        return seconds;
    }

    @Test
    void llama8bLatencyBenchmarkOnH100A100H200() {
        assertThat(latencyBenchmark(Roofline.calibrated(LLAMA_8B, Gpu.H100, 1), 8, 32, 128))
                .isCloseTo(0.9975, withinPercentage(25));
        assertThat(latencyBenchmark(Roofline.calibrated(LLAMA_8B, Gpu.A100, 1), 8, 32, 128))
                .isCloseTo(1.5793, withinPercentage(25));
        assertThat(latencyBenchmark(Roofline.calibrated(LLAMA_8B, Gpu.H200, 1), 8, 32, 128))
                .isCloseTo(0.8341, withinPercentage(25));
    }

    @Test
    void llama70bLatencyBenchmarkOnFourH100() {
        assertThat(latencyBenchmark(Roofline.calibrated(LLAMA_70B, Gpu.H100, 4), 8, 32, 128))
                .isCloseTo(2.4445, withinPercentage(25));
    }

    @Test
    void llama8bDecodeStepAtConcurrencyOneOnH100() {
        // vLLM 0.21, median TPOT 6.48 ms at concurrency 1 (short chat prompts: a few hundred tokens of context)
        assertThat(Roofline.calibrated(LLAMA_8B, Gpu.H100, 1).seconds(StepBatch.EMPTY.plusDecode(300)))
                .isCloseTo(6.48e-3, withinPercentage(25));
    }

    @Test
    void llama70bFp8PrefillOfA5000TokenPromptOnTwoH100() {
        ModelSpec fp8 = new ModelSpec("llama-3.3-70b-fp8", "test", LLAMA_70B.attention(), LLAMA_70B.parameters(), 0,
                Precision.BF16, Precision.FP8, Precision.FP8);
        assertThat(Roofline.calibrated(fp8, Gpu.H100, 2).seconds(StepBatch.EMPTY.plusPrefill(0, 5000)))
                .isCloseTo(0.40677, withinPercentage(25));
    }
}
