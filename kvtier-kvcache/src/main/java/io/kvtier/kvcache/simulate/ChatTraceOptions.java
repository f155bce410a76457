package io.kvtier.kvcache.simulate;

import java.time.Duration;

/**
 * The synthetic chat service {@link ChatTraceGenerator} draws from. Sessions (users) start uniformly over
 * {@code arrivalWindow}; each uses one of {@code systemPrompts} shared system prompts of {@code systemTokens}
 * tokens, picked by Zipf popularity with exponent {@code zipf} (0 = uniform), and runs 1 to 2 x {@code turns} - 1
 * turns (mean {@code turns}). A turn adds a user message of {@code userTokens} and an answer of {@code answerTokens}
 * (each uniform within +-50% of that mean), then the user thinks for an exponential time of mean
 * {@code thinkTime}; a session ends early when its context would exceed {@code maxContextTokens}. Validated on
 * construction.
 */
public record ChatTraceOptions(int sessions, int turns, int systemPrompts, int systemTokens, double zipf,
                               int userTokens, int answerTokens, Duration thinkTime, Duration arrivalWindow,
                               int maxContextTokens, long seed) {
    public ChatTraceOptions {
        positive("--sessions", sessions);
        positive("--turns", turns);
        positive("--system-prompts", systemPrompts);
        positive("--user-tokens", userTokens);
        positive("--answer-tokens", answerTokens);
        if (systemTokens < 0) {
            throw new IllegalArgumentException("--system-tokens " + systemTokens + " must not be negative");
        }
        if (!(zipf >= 0) || Double.isInfinite(zipf)) {
            throw new IllegalArgumentException("--zipf " + zipf + " must be a finite number >= 0");
        }
        if (thinkTime.isNegative() || arrivalWindow.isNegative()) {
            throw new IllegalArgumentException("--think-time and --arrival-window must not be negative");
        }
        long first = (long) systemTokens + userTokens * 3L / 2 + answerTokens * 3L / 2;
        if (maxContextTokens < first) {
            throw new IllegalArgumentException("--max-context " + maxContextTokens + " cannot hold even a first turn "
                    + "(system prompt + the largest user message and answer: " + first + " tokens)");
        }
    }

    private static void positive(String flag, long value) {
        if (value < 1) {
            throw new IllegalArgumentException(flag + " " + value + " must be at least 1");
        }
    }

    /**
     * A mid-sized chat service: 4000 users over an hour, 8 turns each with a minute's thought, 16 system prompts of
     * 2048 tokens (Zipf 1), 200-token questions, 400-token answers, a 32k context.
     */
    public static ChatTraceOptions defaults() {
        return new ChatTraceOptions(4000, 8, 16, 2048, 1.0, 200, 400, Duration.ofSeconds(60), Duration.ofHours(1),
                32768, 1);
    }
}
