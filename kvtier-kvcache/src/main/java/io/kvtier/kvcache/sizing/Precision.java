package io.kvtier.kvcache.sizing;

import java.util.Locale;

/**
 * A number format for weights or KV-cache entries, with its storage cost. KV-cache entries use whole bytes
 * ({@link #kvBytes()}); weights may use fewer (int4, and MXFP4's 4-bit values with one 8-bit scale per 32 values,
 * 4.25 bits each).
 */
public enum Precision {
    FP32("fp32", 32),
    BF16("bf16", 16),
    FP16("fp16", 16),
    FP8("fp8", 8),
    INT4("int4", 4),
    MXFP4("mxfp4", 4.25);

    private final String label;
    private final double bits;

    Precision(String label, double bits) {
        this.label = label;
        this.bits = bits;
    }

    public String label() {
        return label;
    }

    /** Storage bits per weight. */
    public double bits() {
        return bits;
    }

    /** Whether vLLM can hold its KV cache in this format (fp32, bf16, fp16, fp8). */
    public boolean isKvFormat() {
        return bits >= 8 && bits == Math.rint(bits);
    }

    /** Bytes per KV-cache element; only for {@link #isKvFormat()} precisions. */
    public int kvBytes() {
        if (!isKvFormat()) {
            throw new IllegalStateException(label + " is not a KV-cache format");
        }
        return (int) bits / 8;
    }

    /**
     * Parses a name as vLLM and Hugging Face write it: {@code bf16}/{@code bfloat16}, {@code fp16}/{@code float16}/
     * {@code half}, {@code fp32}/{@code float32}/{@code float}, {@code fp8}/{@code fp8_e4m3}/{@code fp8_e5m2},
     * {@code int4}, {@code mxfp4}.
     */
    public static Precision parse(String name) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        return switch (n) {
            case "fp32", "float32", "float" -> FP32;
            case "bf16", "bfloat16" -> BF16;
            case "fp16", "float16", "half" -> FP16;
            case "fp8", "fp8_e4m3", "fp8_e5m2", "float8_e4m3fn", "float8_e5m2" -> FP8;
            case "int4" -> INT4;
            case "mxfp4" -> MXFP4;
            default -> throw new IllegalArgumentException("'" + name + "' is not a known precision "
                    + "(bf16, fp16, fp32, fp8, int4, mxfp4)");
        };
    }

    @Override
    public String toString() {
        return label;
    }
}
