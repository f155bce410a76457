package io.kvtier.router.tokens;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The emulator's chat template: each message as {@code <|role|>\n} and its content, then the assistant's turn. Not a
 * real model's template (those come with its tokenizer); the router renders the same one when none is given.
 */
final class BuiltinChatTemplate implements ChatTemplate {
    static final BuiltinChatTemplate INSTANCE = new BuiltinChatTemplate();

    private BuiltinChatTemplate() {
    }

    @Override
    public String render(JsonNode request) {
        JsonNode messages = request.path("messages");
        if (!messages.isArray() || messages.isEmpty()) {
            throw new IllegalArgumentException("messages must be a non-empty array");
        }
        StringBuilder out = new StringBuilder();
        for (JsonNode m : messages) {
            String role = m.path("role").asText("");
            if (role.isEmpty()) {
                throw new IllegalArgumentException("every message needs a role");
            }
            out.append("<|").append(role).append("|>\n").append(content(m.path("content"))).append('\n');
        }
        return out.append("<|assistant|>\n").toString();
    }

    /** A message's text: a string, or the text parts of a list of content parts. */
    private static String content(JsonNode c) {
        if (c.isTextual()) {
            return c.asText();
        }
        StringBuilder out = new StringBuilder();
        if (c.isArray()) {
            for (JsonNode part : c) {
                if (part.path("type").asText().equals("text")) {
                    out.append(part.path("text").asText());
                }
            }
        }
        return out.toString();
    }
}
