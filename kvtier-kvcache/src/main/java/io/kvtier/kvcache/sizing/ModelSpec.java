package io.kvtier.kvcache.sizing;

import java.util.Objects;

/**
 * One model as the sizing calculator sees it: its attention shape, its parameter count (of which {@code
 * expertParameters} sit in mixture-of-experts expert weights), the dtype it computes in ({@code dtype}, vLLM's
 * {@code --dtype auto} and so its default KV-cache dtype) and how its checkpoint stores weights ({@code weights} for
 * everything, {@code expertWeights} for the experts). {@code source} says where the figures come from. Immutable.
 */
public record ModelSpec(String name, String source, Attention attention, long parameters, long expertParameters,
                        Precision dtype, Precision weights, Precision expertWeights) {
    public ModelSpec {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(attention, "attention");
        Objects.requireNonNull(dtype, "dtype");
        Objects.requireNonNull(weights, "weights");
        Objects.requireNonNull(expertWeights, "expertWeights");
        if (parameters <= 0 || expertParameters < 0 || expertParameters > parameters) {
            throw new IllegalArgumentException(name + ": " + expertParameters + " expert parameters of "
                    + parameters);
        }
        if (!dtype.isKvFormat()) {
            throw new IllegalArgumentException(name + ": torch_dtype " + dtype + " is not a compute dtype");
        }
    }

    /** Bytes of all weights as the checkpoint stores them. */
    public long weightBytes() {
        return bytes(parameters - expertParameters, weights) + bytes(expertParameters, expertWeights);
    }

    /** Bytes of all weights if every one were stored in {@code precision} ({@code --weights-dtype}). */
    public long weightBytes(Precision precision) {
        return bytes(parameters, precision);
    }

    /** A short description of the checkpoint's weight precision: {@code bf16}, or {@code bf16 + mxfp4 experts}. */
    public String weightsLabel() {
        return weights == expertWeights || expertParameters == 0 ? weights.label()
                : weights.label() + " + " + expertWeights.label() + " experts";
    }

    private static long bytes(long params, Precision precision) {
        return (long) Math.ceil(params * precision.bits() / 8);
    }
}
