package io.kvtier.router.tokens;

import com.fasterxml.jackson.databind.JsonNode;

/** Token ids given in a request's JSON (an OpenAI {@code prompt} array, a lookup's {@code token_ids}). */
public final class TokenIds {
    private TokenIds() {
    }

    /** Whether {@code prompt} is one prompt of token ids (a non-empty array starting with an int), not a batch. */
    public static boolean isIdList(JsonNode prompt) {
        return prompt.isArray() && !prompt.isEmpty() && prompt.get(0).isInt();
    }

    /** The elements of the JSON array {@code ids} as ints (as Jackson's {@code asInt} reads each). */
    public static int[] of(JsonNode ids) {
        int[] tokens = new int[ids.size()];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = ids.get(i).asInt();
        }
        return tokens;
    }
}
