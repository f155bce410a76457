package io.kvtier.router.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.kvtier.kvcache.sizing.ModelTable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** --gpu-calibration: a file as bench/gpu-calibrate.py writes it, fitted into the roofline. */
class GpuCalibrationTest {
    @TempDir
    Path dir;

    /** The script's JSON, its prefills timed as a GPU running at {@code efficiency} of its BF16 peak would. */
    private Path file(String gpu, double efficiency, int layers) throws Exception {
        Roofline r = Roofline.calibrated(ModelTable.find("llama-3.1-8b"), Gpu.H100, 1);
        StringBuilder prefill = new StringBuilder();
        for (int context : new int[] {1024, 4096, 8192, 16384}) {
            double s = r.flops(StepBatch.EMPTY.plusPrefill(0, context)) * layers / 32 / (Gpu.H100.peakFlops() * efficiency);
            if (context == 1024) {
                s *= 3; // short prefills carry fixed costs: left out of the fit
            }
            prefill.append(String.format(Locale.ROOT, "{\"context\": %d, \"seconds\": %.6f, \"tokens_per_s\": 1,"
                    + " \"kv_gbps\": 1.0},", context, s));
        }
        prefill.append("{\"context\": 32768, \"error\": \"out of memory\"}");
        Path f = dir.resolve("gpu-calibration-" + gpu.replace(' ', '_') + ".json");
        Files.writeString(f, """
                {"measured": true, "gpu": "%s", "date": "2026-12-02", "torch": "2.5.1", "transformers": "4.46.0",
                 "model": "Llama-3.1-8B-shaped, random weights, bf16, %d of 32 layers", "how": "...",
                 "prefill": [%s],
                 "decode": [{"batch": 1, "context": 1024, "step_seconds": 0.031}],
                 "copies": {"h2d_pinned_64mib_gbps": 50.2, "h2d_pinned_1024mib_gbps": 53.1,
                            "h2d_pageable_1024mib_gbps": 12.0}}
                """.formatted(gpu, layers, prefill));
        return f;
    }

    @Test
    void fitsTheComputeEfficiencyFromTheLongPrefillsAndTakesThePinnedCopyRate() throws Exception {
        GpuCalibration c = GpuCalibration.read(file("NVIDIA H100 80GB HBM3", 0.42, 32), Gpu.H100);
        assertThat(c.computeEfficiency()).isCloseTo(0.42, within(1e-3));
        assertThat(c.prefillPoints()).isEqualTo(3); // 4k, 8k, 16k; not 1k, not the one out of memory
        assertThat(c.hostToDeviceBandwidth()).isEqualTo(53.1e9);

        ModeledEngine engine = ModeledEngine.defaults(ModelTable.find("llama-3.1-8b"), Gpu.H100, 1).withCalibration(c);
        assertThat(engine.roofline().computeEfficiency()).isCloseTo(0.42, within(1e-3));
        assertThat(engine.roofline().memoryEfficiency()).isEqualTo(Roofline.calibrated(ModelTable.find(
                "llama-3.1-8b"), Gpu.H100, 1).memoryEfficiency());
        assertThat(engine.roofline().describe()).contains("measured on NVIDIA H100 80GB HBM3, 2026-12-02");
        assertThat(engine.hostLinkBandwidth()).isEqualTo(53.1e9);
        assertThat(engine.localCpu("m", 256, 1L << 30, 1.0, LoadMode.ASYNC).hostBytesPerSecond()).isEqualTo(53.1e9);
        // Without a calibration: the stated figures, and the header says so.
        ModeledEngine plain = ModeledEngine.defaults(ModelTable.find("llama-3.1-8b"), Gpu.H100, 1);
        assertThat(plain.hostLinkBandwidth()).isEqualTo(Gpu.H100.hostLinkBandwidth());
        assertThat(plain.roofline().describe()).contains("not calibrated on a GPU");
    }

    @Test
    void aRunOnFewerLayersIsScaledToTheWholeModel() throws Exception {
        GpuCalibration c = GpuCalibration.read(file("NVIDIA H100 PCIe", 0.55, 8), Gpu.H100);
        assertThat(c.computeEfficiency()).isCloseTo(0.55, within(1e-3));
    }

    @Test
    void refusesAnotherGpusFileAndOneThatMeasuredNothing() throws Exception {
        Path h100 = file("NVIDIA H100 80GB HBM3", 0.5, 32);
        assertThatThrownBy(() -> GpuCalibration.read(h100, Gpu.H200))
                .hasMessageContaining("measured on NVIDIA H100 80GB HBM3, not on the H200 of --gpu");
        Path none = dir.resolve("none.json");
        Files.writeString(none, "{\"measured\": false, \"why\": \"no CUDA device\"}");
        assertThatThrownBy(() -> GpuCalibration.read(none, Gpu.H100))
                .hasMessageContaining("measured nothing (no CUDA device)");
        Path broken = dir.resolve("broken.json");
        Files.writeString(broken, "{\"measured\": tru");
        assertThatThrownBy(() -> GpuCalibration.read(broken, Gpu.H100)).hasMessageContaining("--gpu-calibration");
    }
}
