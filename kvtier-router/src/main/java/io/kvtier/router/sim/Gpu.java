package io.kvtier.router.sim;

import java.util.Locale;

/**
 * The GPUs the engine model knows, with the datasheet figures its roofline reads: dense BF16 and FP8 tensor-core peaks
 * (not the "with sparsity" figures), HBM bandwidth, memory as {@code nvidia-smi} reports it, and the bandwidth of the link that
 * tensor parallelism all-reduces over (NVLink per direction; PCIe Gen4 x16 for the L4, which has no NVLink). Sources
 * in docs/fleet.md.
 */
public enum Gpu {
    L4(121e12, 242e12, 300e9, 23_034L << 20, 32e9, 25e9),
    A100(312e12, 312e12, 2_039e9, 81_920L << 20, 300e9, 25e9),
    H100(989e12, 1_979e12, 3_350e9, 81_559L << 20, 450e9, 50e9),
    H200(989e12, 1_979e12, 4_800e9, 143_771L << 20, 450e9, 50e9);

    private final double peakFlops;
    private final double fp8PeakFlops;
    private final double hbmBandwidth;
    private final long memoryBytes;
    private final double linkBandwidth;
    private final double hostLinkBandwidth;

    Gpu(double peakFlops, double fp8PeakFlops, double hbmBandwidth, long memoryBytes, double linkBandwidth,
        double hostLinkBandwidth) {
        this.hostLinkBandwidth = hostLinkBandwidth;
        this.peakFlops = peakFlops;
        this.fp8PeakFlops = fp8PeakFlops;
        this.hbmBandwidth = hbmBandwidth;
        this.memoryBytes = memoryBytes;
        this.linkBandwidth = linkBandwidth;
    }

    /** Dense BF16 tensor FLOP/s. */
    public double peakFlops() {
        return peakFlops;
    }

    /**
     * Dense tensor FLOP/s for weights of {@code weights}: the FP8 peak for 8-bit (or smaller) weights where the GPU has
     * FP8 tensor cores (not the A100), else the BF16 peak.
     */
    public double peakFlops(io.kvtier.kvcache.sizing.Precision weights) {
        return weights.bits() <= 8 ? fp8PeakFlops : peakFlops;
    }

    /** HBM bytes/s. */
    public double hbmBandwidth() {
        return hbmBandwidth;
    }

    /** Device memory in bytes. */
    public long memoryBytes() {
        return memoryBytes;
    }

    /**
     * Bytes/s a copy from pinned host memory to the GPU runs at, stated: about 80% of PCIe x16's 32 GB/s (Gen4: L4,
     * A100) or 64 GB/s (Gen5: H100, H200), what pinned copies reach on such links; a GPU calibration measures it
     * (docs/fleet.md).
     */
    public double hostLinkBandwidth() {
        return hostLinkBandwidth;
    }

    /** Bytes/s one GPU sends to its tensor-parallel peers. */
    public double linkBandwidth() {
        return linkBandwidth;
    }

    /** {@code l4}, {@code a100}, {@code h100} or {@code h200}, any case. */
    public static Gpu parse(String name) {
        try {
            return valueOf(name.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--gpu " + name + " is not one of l4, a100, h100, h200");
        }
    }
}
