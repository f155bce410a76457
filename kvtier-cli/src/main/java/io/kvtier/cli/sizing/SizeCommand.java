package io.kvtier.cli.sizing;

import io.kvtier.common.Sizes;
import io.kvtier.kvcache.sizing.HfConfig;
import io.kvtier.kvcache.sizing.ModelSpec;
import io.kvtier.kvcache.sizing.ModelTable;
import io.kvtier.kvcache.sizing.Precision;
import io.kvtier.kvcache.sizing.SizingOptions;
import io.kvtier.kvcache.sizing.SizingReport;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kvtier size}: KV-cache bytes per token and per LMCache chunk for a model, what fits in GPU memory, DRAM and
 * SSD, and kvtier's {@code --memory}/{@code --disk} for a target; a table, or one JSON object with {@code --json}.
 * Maps its flags onto {@link SizingOptions}; bad input is an {@link IllegalArgumentException} naming the flag (exit
 * code 2, one line). See docs/sizing.md.
 */
@Command(name = "size", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Size the KV cache of a model: bytes per token and per LMCache chunk, sequences that fit in GPU "
                + "memory, tokens per tier, and kvtier --memory/--disk for a target. See docs/sizing.md.")
public final class SizeCommand implements Callable<Integer> {
    @Option(names = "--model", paramLabel = "NAME", description = "A built-in model, case-insensitive (--list).")
    String model;

    @Option(names = "--config", paramLabel = "FILE", description = "A Hugging Face config.json instead of --model.")
    Path config;

    @Option(names = "--list", description = "List the built-in models and exit.")
    boolean list;

    @Option(names = "--dtype", paramLabel = "DTYPE", description = "KV-cache dtype: bf16, fp16, fp8, fp32 (default: "
            + "the model's torch_dtype, as vLLM's --kv-cache-dtype auto).")
    String dtype;

    @Option(names = "--weights-dtype", paramLabel = "DTYPE", description = "Weight precision for all parameters: bf16,"
            + " fp16, fp8, fp32, int4, mxfp4 (default: as the checkpoint stores them).")
    String weightsDtype;

    @Option(names = "--tp", paramLabel = "N", defaultValue = "1", description = "Tensor parallelism: GPUs per model "
            + "instance (default: ${DEFAULT-VALUE}).")
    String tp;

    @Option(names = "--gpus", paramLabel = "N", description = "GPUs per node (default: --tp, one instance); "
            + "the node runs --gpus / --tp instances.")
    String gpus;

    @Option(names = "--gpu-hbm", paramLabel = "SIZE", defaultValue = "80g", description = "Memory of one GPU "
            + "(default: ${DEFAULT-VALUE}).")
    String gpuHbm;

    @Option(names = "--gpu-memory-utilization", paramLabel = "F", defaultValue = "0.9", description = "vLLM's "
            + "share of each GPU's memory for weights, activations and KV cache (default: ${DEFAULT-VALUE}).")
    String gpuMemoryUtilization;

    @Option(names = "--activation-reserve", paramLabel = "F|SIZE", defaultValue = "0.05", description = "Per GPU, "
            + "inside that share: peak activations, CUDA graphs and non-torch memory; a fraction of --gpu-hbm or a "
            + "size (default: ${DEFAULT-VALUE}).")
    String activationReserve;

    @Option(names = "--dram", paramLabel = "SIZE", defaultValue = "128g", description = "DRAM per node for kvtier's "
            + "memory tier (default: ${DEFAULT-VALUE}).")
    String dram;

    @Option(names = "--ssd", paramLabel = "SIZE", defaultValue = "1t", description = "SSD per node for kvtier's disk "
            + "tier (default: ${DEFAULT-VALUE}).")
    String ssd;

    @Option(names = "--context", paramLabel = "TOKENS", defaultValue = "8192", description = "Tokens per sequence "
            + "(prompt and output; 32k = 32768) (default: ${DEFAULT-VALUE}).")
    String context;

    @Option(names = "--chunk-tokens", paramLabel = "N", defaultValue = "256", description = "LMCache's chunk_size "
            + "(default: ${DEFAULT-VALUE}).")
    String chunkTokens;

    @Option(names = "--target-sequences", paramLabel = "N", description = "Suggest kvtier --memory/--disk that hold "
            + "the KV of N sequences of --context tokens per node (default: show what DRAM and SSD hold).")
    String targetSequences;

    @Option(names = "--json", description = "Print one JSON object instead of the table.")
    boolean json;

    @Override
    public Integer call() {
        if (list) {
            System.out.print(json ? SizeJson.list() : SizeTable.list());
            System.out.flush();
            return 0;
        }
        SizingReport report = SizingReport.of(model(), options());
        System.out.print(json ? SizeJson.format(report) : SizeTable.format(report));
        System.out.flush();
        return 0;
    }

    private ModelSpec model() {
        if ((model == null) == (config == null)) {
            throw new IllegalArgumentException(model == null ? "give --model NAME (--list shows them) or --config "
                    + "FILE" : "give --model or --config, not both");
        }
        return model != null ? ModelTable.find(model) : HfConfig.read(config);
    }

    SizingOptions options() {
        int tensorParallel = integer("--tp", tp);
        long hbm = size("--gpu-hbm", gpuHbm);
        return new SizingOptions(dtype == null ? null : precision("--dtype", dtype),
                weightsDtype == null ? null : precision("--weights-dtype", weightsDtype), tensorParallel,
                integer("--chunk-tokens", chunkTokens), hbm, gpus == null ? tensorParallel : integer("--gpus", gpus),
                decimal("--gpu-memory-utilization", gpuMemoryUtilization), reserve(hbm), size("--dram", dram),
                size("--ssd", ssd), tokens(context), targetSequences == null ? 0 : integer("--target-sequences",
                targetSequences));
    }

    /** A fraction of the GPU's memory ({@code 0.05}) or a size ({@code 4g}). */
    private long reserve(long hbm) {
        if (activationReserve.contains(".")) {
            double f = decimal("--activation-reserve", activationReserve);
            if (f < 0 || f >= 1) {
                throw new IllegalArgumentException("--activation-reserve " + activationReserve + " is a fraction "
                        + "outside [0, 1) of --gpu-hbm");
            }
            return (long) (f * hbm);
        }
        return size("--activation-reserve", activationReserve);
    }

    private static int tokens(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        if (t.endsWith("k")) {
            return Math.multiplyExact(integer("--context", t.substring(0, t.length() - 1)), 1024);
        }
        return integer("--context", t);
    }

    private static Precision precision(String flag, String text) {
        try {
            return Precision.parse(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(flag + ": " + e.getMessage());
        }
    }

    private static long size(String flag, String text) {
        try {
            return Sizes.parse(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(flag + ": " + e.getMessage());
        }
    }

    private static int integer(String flag, String text) {
        try {
            return Integer.parseInt(text.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(flag + ": '" + text + "' is not a whole number");
        }
    }

    private static double decimal(String flag, String text) {
        try {
            return Double.parseDouble(text.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(flag + ": '" + text + "' is not a number");
        }
    }
}
