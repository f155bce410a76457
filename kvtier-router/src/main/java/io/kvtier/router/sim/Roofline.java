package io.kvtier.router.sim;

import io.kvtier.kvcache.sizing.KvFootprint;
import io.kvtier.kvcache.sizing.ModelSpec;
import io.kvtier.kvcache.sizing.Precision;
import java.util.Locale;

/*
 * The step time of a dense transformer on one GPU of a tensor-parallel group, from a roofline: a step is bound by the
 * GPU's arithmetic or by its memory bandwidth, whichever takes longer, plus the all-reduces of tensor parallelism and a
 * fixed per-step overhead (scheduling, sampling, kernel launches: what is left at batch 1 once weights are read).
 *
 *   FLOPs   = 2 * parameters * (prefill tokens + decoding requests)              the matrix multiplies
 *           + 4 * layers * heads * head_dim * (attended positions)              QK^T and AV, causal
 *   bytes   = weights / tp                                                      every step reads all its weights
 *           + KV bytes per token per GPU * (context read + tokens written)     attention reads the cache
 *   compute = FLOPs / tp / (peak * computeEfficiency)                       the FP8 peak for FP8 weights
 *   memory  = bytes / (HBM bandwidth * memoryEfficiency)
 *   comm    = 2 * layers all-reduces of (tokens * hidden * 2 bytes): ring, 2(tp-1)/tp of it over the link, plus a
 *             fixed latency per all-reduce (0 when tp = 1)
 *   step    = max(compute, memory) + comm + overhead
 *
 * The parameters count embeddings too (a few percent of an 8B model); the efficiencies absorb that, and are what the
 * calibration (docs/fleet.md) fits against published vLLM figures. Mixture-of-experts models are refused: their FLOPs
 * depend on experts per token, which the model table does not carry.
 */

/** A roofline model of one engine's step time: dense model, one tensor-parallel group. Immutable. */
public record Roofline(ModelSpec model, Gpu gpu, int tp, Precision kvDtype, double computeEfficiency,
                       double memoryEfficiency, double overheadSeconds, double allReduceLatencySeconds,
                       String provenance) implements StepCost {
    /** Where the figures come from when nobody says: the datasheet and the published anchors. */
    public static final String DATASHEET = "datasheet figures and published anchors; not calibrated on a GPU";

    public Roofline(ModelSpec model, Gpu gpu, int tp, Precision kvDtype, double computeEfficiency,
                    double memoryEfficiency, double overheadSeconds, double allReduceLatencySeconds) {
        this(model, gpu, tp, kvDtype, computeEfficiency, memoryEfficiency, overheadSeconds, allReduceLatencySeconds,
                DATASHEET);
    }

    public Roofline {
        if (model.expertParameters() > 0) {
            throw new IllegalArgumentException(model.name() + " is a mixture of experts; the roofline models dense"
                    + " models only");
        }
        if (tp < 1) {
            throw new IllegalArgumentException("--tp " + tp + " is below the minimum 1");
        }
        model.attention().checkTensorParallel(tp);
        if (!(computeEfficiency > 0 && computeEfficiency <= 1 && memoryEfficiency > 0 && memoryEfficiency <= 1)) {
            throw new IllegalArgumentException("efficiencies must be within (0, 1]: compute " + computeEfficiency
                    + ", memory " + memoryEfficiency);
        }
        if (overheadSeconds < 0 || allReduceLatencySeconds < 0) {
            throw new IllegalArgumentException("overheads must not be negative");
        }
    }

    /** The calibrated defaults for {@code gpu} (docs/fleet.md, "Calibration"). */
    public static Roofline calibrated(ModelSpec model, Gpu gpu, int tp) {
        return new Roofline(model, gpu, tp, model.dtype(), Calibration.COMPUTE_EFFICIENCY,
                Calibration.MEMORY_EFFICIENCY, Calibration.STEP_OVERHEAD_SECONDS, Calibration.ALL_REDUCE_SECONDS);
    }

    /**
     * The defaults for {@code gpu}, with the compute efficiency {@code measured} on it where it has one (the rest:
     * datasheet and published anchors). {@code measured} may be null.
     */
    public static Roofline calibrated(ModelSpec model, Gpu gpu, int tp, GpuCalibration measured) {
        if (measured == null || !measured.hasComputeEfficiency()) {
            return measured == null ? calibrated(model, gpu, tp) : new Roofline(model, gpu, tp, model.dtype(),
                    Calibration.COMPUTE_EFFICIENCY, Calibration.MEMORY_EFFICIENCY, Calibration.STEP_OVERHEAD_SECONDS,
                    Calibration.ALL_REDUCE_SECONDS, DATASHEET + " (" + measured.describe() + ")");
        }
        return new Roofline(model, gpu, tp, model.dtype(), measured.computeEfficiency(),
                Calibration.MEMORY_EFFICIENCY, Calibration.STEP_OVERHEAD_SECONDS, Calibration.ALL_REDUCE_SECONDS,
                measured.describe() + "; memory efficiency and step overhead: published anchors");
    }

    /** The fitted constants, one place. */
    static final class Calibration {
        static final double COMPUTE_EFFICIENCY = 0.50;
        static final double MEMORY_EFFICIENCY = 0.70;
        static final double STEP_OVERHEAD_SECONDS = 0.6e-3;
        static final double ALL_REDUCE_SECONDS = 8e-6;

        private Calibration() {
        }
    }

    /** KV bytes per token held by one GPU of the group. */
    public long kvBytesPerTokenPerGpu() {
        return KvFootprint.of(model, kvDtype, tp).workerBytesPerToken();
    }

    /** FLOPs of the whole model (all GPUs of the group) for {@code b}. */
    public double flops(StepBatch b) {
        var a = model.attention();
        double linear = 2.0 * model.parameters() * (b.prefillTokens() + b.decodeSeqs());
        double attention = 4.0 * a.layers() * a.attentionHeads() * a.headDim()
                * (b.prefillAttention() + b.decodeContext());
        return linear + attention;
    }

    /** Bytes one GPU moves through HBM for {@code b}. */
    public double bytesPerGpu(StepBatch b) {
        double weights = (double) model.weightBytes() / tp;
        double kv = (double) kvBytesPerTokenPerGpu()
                * (b.prefillKvReads() + b.decodeContext() + b.prefillTokens() + b.decodeSeqs());
        return weights + kv;
    }

    /** Seconds of the all-reduces of one step on one GPU (0 without tensor parallelism). */
    public double communicationSeconds(StepBatch b) {
        if (tp == 1) {
            return 0;
        }
        var a = model.attention();
        double hidden = (double) a.attentionHeads() * a.headDim();
        double bytes = (b.prefillTokens() + b.decodeSeqs()) * hidden * 2;
        int allReduces = 2 * a.layers();
        return allReduces * (2.0 * (tp - 1) / tp * bytes / gpu.linkBandwidth() + allReduceLatencySeconds);
    }

    @Override
    public double seconds(StepBatch b) {
        if (b.isEmpty()) {
            return 0;
        }
        double compute = flops(b) / tp / (gpu.peakFlops(model.weights()) * computeEfficiency);
        double memory = bytesPerGpu(b) / (gpu.hbmBandwidth() * memoryEfficiency);
        return Math.max(compute, memory) + communicationSeconds(b) + overheadSeconds;
    }

    @Override
    public String describe() {
        return String.format(Locale.ROOT, "roofline: %s on %s x%d (%.0f TFLOP/s at %.0f%%, %.0f GB/s at %.0f%%,"
                        + " %.2f ms per step; %s)", model.name(), gpu, tp, gpu.peakFlops(model.weights()) / 1e12,
                computeEfficiency * 100, gpu.hbmBandwidth() / 1e9, memoryEfficiency * 100, overheadSeconds * 1e3,
                provenance);
    }
}
