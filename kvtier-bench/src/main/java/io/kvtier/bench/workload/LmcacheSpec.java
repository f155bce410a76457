package io.kvtier.bench.workload;

import io.kvtier.common.Units;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * {@code lmcache}: the shape of the chats and of LMCache's chunks. Immutable, validated; messages name the flag.
 *
 * @param model              model name, the first part of every key ({@code --model})
 * @param dtype              appended as {@code @dtype} to keys when not empty, as newer LMCache versions do
 * @param chunkTokens        tokens per chunk ({@code --chunk-tokens}, LMCache's {@code chunk_size})
 * @param chunkBytes         kv_bytes per chunk ({@code --chunk-bytes}; 32 MiB = Llama-3-8B bf16 at 256 tokens)
 * @param systemPromptTokens tokens of each shared system prompt
 * @param systemPrompts      distinct system prompts; conversation c uses prompt c mod this
 * @param conversations      conversations, drawn with Zipf popularity
 * @param zipfExponent       Zipf exponent s: P(rank k) ~ 1/k^s (0 = uniform)
 * @param userTokens         tokens of each new user turn
 * @param replyTokens        tokens of each model reply, appended to the history after the request
 * @param maxContextTokens   a conversation whose next prompt would exceed this starts over as a new one
 * @param probeSuffix        the suffix EXISTS probes: {@code metadata} (what LMCache's RedisConnector checks) or
 *                           {@code kv_bytes}
 */
public record LmcacheSpec(String model, String dtype, int chunkTokens, int chunkBytes, int systemPromptTokens,
        int systemPrompts, int conversations, double zipfExponent, int userTokens, int replyTokens,
        int maxContextTokens, String probeSuffix) implements WorkloadSpec {

    public LmcacheSpec {
        Objects.requireNonNull(model, "model");
        Objects.requireNonNull(dtype, "dtype");
        if (model.isBlank() || model.contains("@")) {
            throw new IllegalArgumentException("--model '" + model + "' must be non-empty and without '@'");
        }
        if (!dtype.matches("[A-Za-z0-9_]*")) {
            throw new IllegalArgumentException("--dtype '" + dtype + "' must be letters, digits or '_'");
        }
        Bounds.check("--chunk-tokens", chunkTokens, 1, 1 << 20);
        Bounds.checkBytes("--chunk-bytes", chunkBytes, 16, 512L << 20);
        Bounds.check("--system-prompt-tokens", systemPromptTokens, 0, 1 << 24);
        Bounds.check("--system-prompts", systemPrompts, 1, 1 << 20);
        Bounds.check("--conversations", conversations, 1, 10_000_000);
        Bounds.check("--zipf", zipfExponent, 0, 10);
        Bounds.check("--user-tokens", userTokens, 1, 1 << 24);
        Bounds.check("--reply-tokens", replyTokens, 0, 1 << 24);
        Bounds.check("--max-context-tokens", maxContextTokens, (long) systemPromptTokens + userTokens, 1 << 26);
        if (!probeSuffix.equals(LmcacheKeys.METADATA) && !probeSuffix.equals(LmcacheKeys.KV_BYTES)) {
            throw new IllegalArgumentException("--probe-suffix '" + probeSuffix + "' must be metadata or kv_bytes");
        }
    }

    @Override
    public String name() {
        return "lmcache";
    }

    @Override
    public Map<String, String> parameters() {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("model", model);
        p.put("dtype", dtype);
        p.put("chunkTokens", Integer.toString(chunkTokens));
        p.put("chunkBytes", Units.bytes(chunkBytes));
        p.put("systemPromptTokens", Integer.toString(systemPromptTokens));
        p.put("systemPrompts", Integer.toString(systemPrompts));
        p.put("conversations", Integer.toString(conversations));
        p.put("zipf", Double.toString(zipfExponent));
        p.put("userTokens", Integer.toString(userTokens));
        p.put("replyTokens", Integer.toString(replyTokens));
        p.put("maxContextTokens", Integer.toString(maxContextTokens));
        p.put("probeSuffix", probeSuffix);
        return p;
    }
}
