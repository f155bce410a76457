package io.kvtier.kvcache.sizing;

/**
 * A model's parameter count estimated from its config: embeddings (twice unless tied), and per layer the attention
 * projections (GQA: q, k, v, o; MLA: the low-rank q and kv projections and o) plus the MLP (dense: gate, up, down;
 * mixture of experts: every routed and shared expert, and the router). Norms and biases are left out (well under 0.1%
 * for the models in the built-in table, whose estimates are tested against the published counts). {@code experts} is
 * the part in routed and shared expert weights, which MXFP4 checkpoints quantize.
 */
record ParameterCount(long total, long experts) {
    static ParameterCount of(HfConfig c, Attention a) {
        long hidden = c.integer("hidden_size");
        long vocab = c.integer("vocab_size");
        long embeddings = vocab * hidden * (c.flag("tie_word_embeddings", true) ? 1 : 2);
        long attention = a.isMla() ? mla(c, hidden) : gqa(a, hidden);
        int routed = routedExperts(c);
        if (routed == 0) {
            long mlp = 3 * hidden * c.integer("intermediate_size");
            return new ParameterCount(embeddings + a.layers() * (attention + mlp), 0);
        }
        long expertSize = 3 * hidden * (c.isSet("moe_intermediate_size") ? c.integer("moe_intermediate_size")
                : c.integer("intermediate_size"));
        long shared = c.optionalInteger("n_shared_experts", 0) * expertSize;
        if (c.isSet("shared_expert_intermediate_size")) {
            shared += 3 * hidden * c.integer("shared_expert_intermediate_size");
        }
        int dense = c.optionalInteger("first_k_dense_replace", 0);
        int sparse = a.layers() - dense;
        long experts = sparse * (routed * expertSize + shared);
        long denseMlp = dense == 0 ? 0 : dense * 3 * hidden * c.integer("intermediate_size");
        long router = sparse * hidden * routed;
        return new ParameterCount(embeddings + a.layers() * attention + denseMlp + router + experts, experts);
    }

    private static long gqa(Attention a, long hidden) {
        long q = (long) a.attentionHeads() * a.headDim();
        long kv = (long) a.kvHeads() * a.headDim();
        return hidden * q + 2 * hidden * kv + q * hidden;
    }

    /** DeepSeek-V2/V3 attention: q through an optional q_lora_rank bottleneck, kv through kv_lora_rank. */
    private static long mla(HfConfig c, long hidden) {
        long heads = c.integer("num_attention_heads");
        long nope = c.integer("qk_nope_head_dim");
        long rope = c.integer("qk_rope_head_dim");
        long vHead = c.integer("v_head_dim");
        long kvRank = c.integer("kv_lora_rank");
        long qHead = heads * (nope + rope);
        long q = c.isSet("q_lora_rank") ? hidden * c.integer("q_lora_rank") + c.integer("q_lora_rank") * qHead
                : hidden * qHead;
        long kv = hidden * (kvRank + rope) + kvRank * heads * (nope + vHead);
        return q + kv + heads * vHead * hidden;
    }

    /** Routed experts per MoE layer: DeepSeek's n_routed_experts, Mixtral's num_local_experts, Qwen's num_experts. */
    private static int routedExperts(HfConfig c) {
        for (String name : new String[] {"n_routed_experts", "num_local_experts", "num_experts"}) {
            if (c.isSet(name)) {
                return c.integer(name);
            }
        }
        return 0;
    }
}
