package io.kvtier.router.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvtier.kvcache.sizing.ModelSpec;
import io.kvtier.kvcache.sizing.ModelTable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What {@code bench/gpu-calibrate.py} measured on a real GPU, as the roofline uses it ({@code --gpu-calibration FILE}).
 *
 * <p>Two figures are taken from the file; the rest of the roofline stays on the datasheet and the published anchors
 * (docs/fleet.md, "Calibration on a GPU"):
 * <ul>
 *   <li>the <b>compute efficiency</b>: for each prefill the script timed at 4,096 tokens or more (compute-bound; the
 *       fixed per-step cost is a few percent of it), the roofline's FLOPs of that prefill for Llama-3.1-8B (scaled by
 *       the layers the script ran, of 32) over the GPU's BF16 peak times the measured seconds; the median of them;</li>
 *   <li>the <b>host-to-device rate</b> of pinned memory (the 1 GiB copy), which the baselines' CPU tiers load at.</li>
 * </ul>
 * The decode steps the script times are not used: transformers decodes without CUDA graphs, one Python call per
 * layer, so its step at small batches is launch-bound, not the step vLLM runs; they are kept in the file for reading.
 *
 * @param gpuName               the device's name as PyTorch reports it (e.g. {@code NVIDIA H100 80GB HBM3})
 * @param date                  the day it was measured
 * @param source                the file
 * @param computeEfficiency     the fitted compute efficiency, or {@code NaN} where no prefill of 4,096 tokens or more
 *                              was measured (the roofline's default is kept)
 * @param hostToDeviceBandwidth bytes/s of a pinned host-to-device copy, or {@code NaN} where none was measured
 * @param prefillPoints         the prefills the fit used
 */
public record GpuCalibration(String gpuName, String date, Path source, double computeEfficiency,
                             double hostToDeviceBandwidth, int prefillPoints) {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The model the script builds: Llama-3.1-8B's shape (32 layers), bf16. */
    private static final String SCRIPT_MODEL = "llama-3.1-8b";
    private static final int SCRIPT_MODEL_LAYERS = 32;
    /** Prefills shorter than this are left out of the fit: their fixed per-step costs are not negligible. */
    static final int MIN_FIT_CONTEXT = 4096;

    /** Reads {@code file}, refusing one measured on another GPU than {@code gpu}, or one that measured nothing. */
    public static GpuCalibration read(Path file, Gpu gpu) throws IOException {
        JsonNode root;
        try {
            root = JSON.readTree(Files.readString(file));
        } catch (IOException e) {
            throw new IOException("--gpu-calibration " + file + ": " + e.getMessage(), e);
        }
        String what = "--gpu-calibration " + file;
        if (root == null || !root.isObject()) {
            throw new IllegalArgumentException(what + " is not a JSON object (bench/gpu-calibrate.py writes one)");
        }
        if (!root.path("measured").asBoolean(false)) {
            throw new IllegalArgumentException(what + " measured nothing (" + root.path("why").asText("no reason given")
                    + "): run bench/gpu-calibrate.py where a GPU is");
        }
        String name = root.path("gpu").asText("");
        if (!name.toUpperCase(Locale.ROOT).contains(gpu.name())) {
            throw new IllegalArgumentException(what + " was measured on " + (name.isEmpty() ? "an unnamed GPU" : name)
                    + ", not on the " + gpu + " of --gpu");
        }
        int layers = layersOf(root.path("model").asText(""));
        ModelSpec model = ModelTable.find(SCRIPT_MODEL);
        Roofline datasheet = Roofline.calibrated(model, gpu, 1);
        List<Double> fits = new ArrayList<>();
        for (JsonNode p : root.path("prefill")) {
            long context = p.path("context").asLong(0);
            double seconds = p.path("seconds").asDouble(Double.NaN);
            if (context < MIN_FIT_CONTEXT || !(seconds > 0)) {
                continue; // too short to be compute-bound, or out of memory
            }
            double flops = datasheet.flops(StepBatch.EMPTY.plusPrefill(0, context)) * layers / SCRIPT_MODEL_LAYERS;
            fits.add(Math.min(1.0, flops / (gpu.peakFlops() * seconds)));
        }
        fits.sort(null);
        double efficiency = fits.isEmpty() ? Double.NaN : fits.get(fits.size() / 2);
        double gbps = root.path("copies").path("h2d_pinned_1024mib_gbps").asDouble(Double.NaN);
        return new GpuCalibration(name, root.path("date").asText("an unknown day"), file, efficiency,
                gbps > 0 ? gbps * 1e9 : Double.NaN, fits.size());
    }

    /** "Llama-3.1-8B-shaped, random weights, bf16, 8 of 32 layers" gives 8; 32 where the file does not say. */
    private static int layersOf(String model) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d+) of (\\d+) layers").matcher(model);
        if (m.find()) {
            int layers = Integer.parseInt(m.group(1));
            if (layers >= 1 && layers <= SCRIPT_MODEL_LAYERS) {
                return layers;
            }
        }
        return SCRIPT_MODEL_LAYERS;
    }

    public boolean hasComputeEfficiency() {
        return !Double.isNaN(computeEfficiency);
    }

    public boolean hasHostToDeviceBandwidth() {
        return !Double.isNaN(hostToDeviceBandwidth);
    }

    /** One line for a run's header: what was measured, where and when. */
    public String describe() {
        List<String> measured = new ArrayList<>();
        if (hasComputeEfficiency()) {
            measured.add(String.format(Locale.ROOT, "compute efficiency %.2f from %d prefills", computeEfficiency,
                    prefillPoints));
        }
        if (hasHostToDeviceBandwidth()) {
            measured.add(String.format(Locale.ROOT, "pinned host-to-device %.1f GB/s", hostToDeviceBandwidth / 1e9));
        }
        return (measured.isEmpty() ? "nothing usable" : String.join(", ", measured)) + " measured on " + gpuName + ", "
                + date + " (" + source.getFileName() + ")";
    }
}
