package io.kvtier.bench;

import io.kvtier.bench.run.BenchOptions;
import io.kvtier.bench.workload.LmcacheSpec;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code kvtier bench lmcache}: LMCache's Redis connector serving multi-round chats. */
@Command(name = "lmcache", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"LMCache's Redis connector serving multi-round chats: each request's prompt (shared system "
                + "prompt + conversation history + new turn) is split into chunks; EXISTS probes them in order "
                + "until the first miss, GET metadata + kv_bytes fetches the hits, SET kv_bytes + metadata stores "
                + "the rest. Conversations are drawn with Zipf popularity. Reports the chunk hit rate, bytes moved "
                + "and latency per command and per request.",
            "Example: kvtier bench lmcache --chunk-bytes 1m --duration 30s"})
final class LmcacheCommand extends WorkloadCommand {
    @Option(names = "--model", paramLabel = "NAME", defaultValue = "meta-llama/Meta-Llama-3-8B-Instruct",
            description = "Model name, the first part of every key (default: ${DEFAULT-VALUE}).")
    String model;

    @Option(names = "--dtype", paramLabel = "NAME",
            description = "Append @NAME to keys, as newer LMCache versions do, e.g. bfloat16 (default: none).")
    String dtype;

    @Option(names = "--chunk-tokens", paramLabel = "N", defaultValue = "256",
            description = "Tokens per chunk, LMCache's chunk_size (default: ${DEFAULT-VALUE}).")
    int chunkTokens;

    @Option(names = "--chunk-bytes", paramLabel = "SIZE", defaultValue = "32m",
            converter = FlagValues.SizeConverter.class,
            description = "kv_bytes per chunk; 32m = Llama-3-8B bf16 at 256 tokens, 1m for quick runs "
                    + "(default: ${DEFAULT-VALUE}).")
    long chunkBytes;

    @Option(names = "--system-prompt-tokens", paramLabel = "N", defaultValue = "1024",
            description = "Tokens of the shared system prompt (default: ${DEFAULT-VALUE}).")
    int systemPromptTokens;

    @Option(names = "--system-prompts", paramLabel = "N", defaultValue = "1",
            description = "Distinct system prompts; conversation c uses prompt c mod N (default: ${DEFAULT-VALUE}).")
    int systemPrompts;

    @Option(names = "--conversations", paramLabel = "N", defaultValue = "64",
            description = "Conversations, drawn with Zipf popularity (default: ${DEFAULT-VALUE}).")
    int conversations;

    @Option(names = "--zipf", paramLabel = "S", defaultValue = "1.0",
            description = "Zipf exponent: P(k-th most popular) ~ 1/k^S; 0 = uniform (default: ${DEFAULT-VALUE}).")
    double zipf;

    @Option(names = "--user-tokens", paramLabel = "N", defaultValue = "128",
            description = "Tokens of each new user turn (default: ${DEFAULT-VALUE}).")
    int userTokens;

    @Option(names = "--reply-tokens", paramLabel = "N", defaultValue = "256",
            description = "Tokens of each model reply, added to the history (default: ${DEFAULT-VALUE}).")
    int replyTokens;

    @Option(names = "--max-context-tokens", paramLabel = "N", defaultValue = "8192",
            description = "A conversation whose next prompt would be longer starts over (default: ${DEFAULT-VALUE}).")
    int maxContextTokens;

    @Option(names = "--probe-suffix", paramLabel = "metadata|kv_bytes", defaultValue = "metadata",
            description = "Key suffix EXISTS probes; LMCache's RedisConnector probes metadata "
                    + "(default: ${DEFAULT-VALUE}).")
    String probeSuffix;

    @Mixin
    LimitFlags limit;

    @Override
    BenchOptions options() {
        int chunk = sizes("--chunk-bytes", List.of(chunkBytes)).getFirst();
        LmcacheSpec spec = new LmcacheSpec(model, dtype == null ? "" : dtype, chunkTokens, chunk,
                systemPromptTokens, systemPrompts, conversations, zipf, userTokens, replyTokens, maxContextTokens,
                probeSuffix);
        BenchOptions.Builder builder = common(BenchOptions.builder(spec));
        limit.applyTo(builder);
        return builder.build();
    }
}
