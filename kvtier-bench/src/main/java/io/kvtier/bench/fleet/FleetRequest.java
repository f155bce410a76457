package io.kvtier.bench.fleet;

import java.util.Objects;

/**
 * One completion request of the fleet benchmark: a prompt as token ids (so that every engine and the router see the
 * same tokens without a tokenizer), the answer length asked for, and who asks ({@code user} and {@code round} for a
 * multi-round chat, the trace line's index for a trace). Immutable; {@code prompt} is not copied and must not change.
 */
public record FleetRequest(String user, int round, int[] prompt, int maxTokens) {
    public FleetRequest {
        Objects.requireNonNull(user, "user");
        Objects.requireNonNull(prompt, "prompt");
        if (prompt.length == 0 || maxTokens < 1) {
            throw new IllegalArgumentException("a request needs a prompt and max_tokens >= 1 (" + prompt.length
                    + " prompt tokens, max_tokens " + maxTokens + ")");
        }
    }
}
