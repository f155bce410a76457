package io.kvtier.router.sim;

import io.kvtier.client.HostPort;
import io.kvtier.kvcache.sizing.KvFootprint;
import io.kvtier.kvcache.sizing.ModelSpec;
import io.kvtier.router.events.Layout;
import java.time.Duration;
import java.util.Objects;

/**
 * An engine as the fleet model sees it: a model from {@code kvtier size}'s table served on a GPU with tensor
 * parallelism {@code tp}, vLLM's memory and scheduler settings; from these come its step cost (the calibrated
 * {@link Roofline}, with what a {@link GpuCalibration} measured where one is given, else null), its GPU blocks
 * ({@link HbmBudget}) and its LMCache chunk size in bytes. Immutable.
 */
public record ModeledEngine(ModelSpec model, Gpu gpu, int tp, double memoryUtilization, long activationReserveBytes,
                            int blockSize, int maxSeqs, int maxBatchedTokens, GpuCalibration calibration) {
    public ModeledEngine(ModelSpec model, Gpu gpu, int tp, double memoryUtilization, long activationReserveBytes,
                         int blockSize, int maxSeqs, int maxBatchedTokens) {
        this(model, gpu, tp, memoryUtilization, activationReserveBytes, blockSize, maxSeqs, maxBatchedTokens, null);
    }

    /** This engine with the figures {@code measured} on its GPU (null: none). */
    public ModeledEngine withCalibration(GpuCalibration measured) {
        return new ModeledEngine(model, gpu, tp, memoryUtilization, activationReserveBytes, blockSize, maxSeqs,
                maxBatchedTokens, measured);
    }

    /** vLLM's defaults: 90% of the GPU's memory, 16-token blocks, 256 sequences, 8192 batched tokens. */
    public static ModeledEngine defaults(ModelSpec model, Gpu gpu, int tp) {
        return new ModeledEngine(model, gpu, tp, 0.9, 2L << 30, 16, 256, 8192);
    }

    public ModeledEngine {
        Objects.requireNonNull(model, "model");
        Objects.requireNonNull(gpu, "gpu");
        Roofline.calibrated(model, gpu, tp); // validates the model and tp
    }

    public Roofline roofline() {
        return Roofline.calibrated(model, gpu, tp, calibration);
    }

    /** Bytes/s of a pinned host-to-device copy: measured where the calibration has it, else the GPU's stated one. */
    public double hostLinkBandwidth() {
        return calibration != null && calibration.hasHostToDeviceBandwidth() ? calibration.hostToDeviceBandwidth()
                : gpu.hostLinkBandwidth();
    }

    public HbmBudget hbm() {
        return new HbmBudget(gpu, memoryUtilization, model.weightBytes() / tp, activationReserveBytes,
                roofline().kvBytesPerTokenPerGpu(), blockSize);
    }

    /** One worker's bytes of an LMCache chunk of {@code chunkTokens} tokens. */
    public long chunkBytes(int chunkTokens) {
        return KvFootprint.of(model, model.dtype(), tp).chunkBytes(chunkTokens);
    }

    /** The options of an engine serving {@code servedName} on {@code host:port}, offloading per {@code offload}. */
    public EngineSimOptions options(String host, int port, String servedName, int eventsPort, int replayPort,
            String topic, Layout layout, EngineSimOptions.Offload offload) {
        return new EngineSimOptions(host, port, servedName, eventsPort, replayPort, topic, layout, blockSize,
                hbm().blocks(), maxSeqs, maxBatchedTokens, roofline(), offload);
    }

    /**
     * The engine's own CPU memory as its offload tier ({@link LocalCpuCache}: vLLM's native CPU offloading, LMCache's
     * local CPU backend): {@code cpuBytes} real bytes, loaded at {@link #hostLinkBandwidth}, in {@code mode}.
     */
    public EngineSimOptions.Offload localCpu(String lmcacheModel, int chunkTokens, long cpuBytes, double bytesScale,
            LoadMode mode) {
        return new EngineSimOptions.Offload(null, false, lmcacheModel, tp, "bfloat16", chunkTokens,
                chunkBytes(chunkTokens), chunkBytes(chunkTokens) * tp, Duration.ofSeconds(5), 1, bytesScale, false, mode,
                model.attention().layers(), cpuBytes, hostLinkBandwidth());
    }

    /** LMCache's offload to kvtier at {@code kvtier} with its defaults: 256-token chunks, 5 GB of CPU buffer. */
    public EngineSimOptions.Offload offload(HostPort kvtier, boolean cluster, String lmcacheModel, int chunkTokens,
            long bufferBytes, Duration timeout, double bytesScale) {
        String dtype = switch (model.dtype().label()) { // torch's name, as LMCache writes it in keys
            case "bf16" -> "bfloat16";
            case "fp16" -> "float16";
            case "fp32" -> "float32";
            default -> model.dtype().label();
        };
        return new EngineSimOptions.Offload(kvtier, cluster, lmcacheModel, tp, dtype, chunkTokens,
                chunkBytes(chunkTokens), bufferBytes, timeout, Math.max(2, 4 * tp), bytesScale, false, LoadMode.SYNC,
                model.attention().layers(), 0, 0);
    }
}
