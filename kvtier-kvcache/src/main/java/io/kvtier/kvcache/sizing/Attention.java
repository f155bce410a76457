package io.kvtier.kvcache.sizing;

/**
 * What a model's attention layers keep per token: {@code layers} layers of {@code kvHeads} key and value heads of
 * {@code headDim} elements each, or, for multi-head latent attention (MLA, DeepSeek-V2/V3), one latent vector of
 * {@code mlaLatentDim} = kv_lora_rank + qk_rope_head_dim elements per layer shared by all heads. {@code slidingLayers}
 * of the layers attend only to the last {@code slidingWindow} tokens (0 and 0 when every layer attends to everything).
 * Immutable; validated on construction.
 */
public record Attention(int layers, int attentionHeads, int kvHeads, int headDim, int mlaLatentDim, int slidingWindow,
                        int slidingLayers) {
    public Attention {
        positive("num_hidden_layers", layers);
        positive("num_attention_heads", attentionHeads);
        positive("num_key_value_heads", kvHeads);
        positive("head_dim", headDim);
        if (mlaLatentDim < 0 || slidingWindow < 0) {
            throw new IllegalArgumentException("latent size and sliding window must not be negative");
        }
        if (slidingLayers < 0 || slidingLayers > layers) {
            throw new IllegalArgumentException(slidingLayers + " sliding-window layers of " + layers);
        }
        if ((slidingWindow == 0) != (slidingLayers == 0)) {
            throw new IllegalArgumentException("sliding window " + slidingWindow + " with " + slidingLayers
                    + " sliding-window layers");
        }
    }

    /** Full attention, every layer the same. */
    public static Attention full(int layers, int attentionHeads, int kvHeads, int headDim) {
        return new Attention(layers, attentionHeads, kvHeads, headDim, 0, 0, 0);
    }

    public boolean isMla() {
        return mlaLatentDim > 0;
    }

    public int fullLayers() {
        return layers - slidingLayers;
    }

    /**
     * KV elements one layer keeps per token on one tensor-parallel worker of {@code tp}. GQA/MHA: K and V for
     * {@code kvHeads / tp} heads, at least one (vLLM replicates a KV head over {@code tp / kvHeads} workers when there
     * are fewer heads than workers). MLA: the whole latent on every worker (vLLM replicates it; heads are split only
     * for the queries).
     */
    public long elementsPerTokenPerLayer(int tp) {
        if (isMla()) {
            return mlaLatentDim;
        }
        return 2L * Math.max(1, kvHeads / tp) * headDim;
    }

    /**
     * Checks that {@code tp} workers can split the heads as vLLM requires: query heads divisible by {@code tp}, and
     * KV heads divisible by {@code tp} or {@code tp} divisible by KV heads.
     */
    public void checkTensorParallel(int tp) {
        if (attentionHeads % tp != 0) {
            throw new IllegalArgumentException("--tp " + tp + " does not divide the model's " + attentionHeads
                    + " attention heads");
        }
        if (!isMla() && kvHeads % tp != 0 && tp % kvHeads != 0) {
            throw new IllegalArgumentException("--tp " + tp + " and the model's " + kvHeads + " KV heads: one must "
                    + "divide the other");
        }
    }

    private static void positive(String field, int value) {
        if (value <= 0) {
            throw new IllegalArgumentException(field + " is " + value + ", must be positive");
        }
    }
}
