package io.kvtier.bench.workload;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The stream of chat requests an LMCache-backed engine would serve: a conversation is drawn by Zipf popularity
 * (conversation 0 the most popular), its prompt is the system prompt + its history + a new user turn, and after
 * the request the history grows by that turn and the model's reply. A conversation whose next prompt would exceed
 * the context starts over as a new conversation (new tokens, new chunk hashes).
 *
 * <p>Deterministic for a seed, in draw order. Thread-safe: {@link #next()} is synchronized, since lanes draw
 * concurrently.
 */
final class ChatTraffic {
    private final LmcacheSpec spec;
    private final long seed;
    private final ZipfSampler popularity;
    private final SplittableRandom random;
    private final int[] turns;
    private final int[] generations;

    ChatTraffic(LmcacheSpec spec, long seed) {
        this.spec = spec;
        this.seed = seed;
        this.popularity = new ZipfSampler(spec.conversations(), spec.zipfExponent());
        this.random = new SplittableRandom(seed);
        this.turns = new int[spec.conversations()];
        this.generations = new int[spec.conversations()];
    }

    synchronized ChatTurn next() {
        int c = popularity.sample(random);
        if (promptTokens(turns[c]) > spec.maxContextTokens()) {
            generations[c]++;
            turns[c] = 0;
        }
        int turn = turns[c]++;
        ChatPrompt prompt = prompt(c, generations[c], turn);
        List<String> keys = new ArrayList<>();
        for (long hash : prompt.chunkHashes(spec.chunkTokens())) {
            keys.add(LmcacheKeys.chunkKey(spec.model(), hash, spec.dtype()));
        }
        return new ChatTurn(c, generations[c], turn, prompt.length(), keys);
    }

    ChatPrompt prompt(int conversation, int generation, int turn) {
        long systemPrompt = ChatPrompt.mix(seed ^ 0x5157_e3a0_0000_0000L ^ (conversation % spec.systemPrompts()));
        long id = ChatPrompt.mix(ChatPrompt.mix(seed + conversation) + generation * 0x9E3779B97F4A7C15L);
        return new ChatPrompt(systemPrompt, id, spec.systemPromptTokens(), (int) promptTokens(turn));
    }

    /** System prompt + {@code turn} earlier (user, reply) pairs + the new user turn. */
    long promptTokens(int turn) {
        return spec.systemPromptTokens() + (long) turn * (spec.userTokens() + spec.replyTokens()) + spec.userTokens();
    }
}
