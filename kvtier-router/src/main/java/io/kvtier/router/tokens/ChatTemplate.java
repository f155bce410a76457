package io.kvtier.router.tokens;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Turns a chat request ({@code /v1/chat/completions}'s body) into the prompt text the model reads: what vLLM does
 * with the model's chat template before tokenizing a chat request without special tokens. Implementations are
 * thread-safe.
 */
public interface ChatTemplate {
    /**
     * The prompt of {@code request}: its {@code messages}, {@code tools}, {@code add_generation_prompt} (default true)
     * and {@code chat_template_kwargs}.
     *
     * @throws IllegalArgumentException when the request has no messages, or the template refuses it (its
     *                                  {@code raise_exception}) or fails on it
     */
    String render(JsonNode request);

    /** The emulator's own template ({@code <|role|>} lines): used when no model template is given or found. */
    static ChatTemplate builtin() {
        return BuiltinChatTemplate.INSTANCE;
    }

    /**
     * The model's template, as vLLM finds it: {@code templateFile} when given (vLLM's {@code --chat-template}), else
     * {@code chat_template.jinja} in the tokenizer's directory, else {@code chat_template} in its
     * {@code tokenizer_config.json} (a string, or a list of named templates: the one named {@code default}). Special
     * tokens ({@code bos_token}, {@code eos_token} and the other {@code *_token} entries) come from that
     * {@code tokenizer_config.json}. Null when there is no template to be found.
     *
     * @param tokenizer    {@code --tokenizer}: a tokenizer.json or the directory holding one; may be null
     * @param templateFile {@code --chat-template}: a Jinja file; may be null
     */
    static ChatTemplate load(Path tokenizer, Path templateFile) throws IOException {
        Path dir = tokenizer == null ? null : Files.isDirectory(tokenizer) ? tokenizer : tokenizer.toAbsolutePath()
                .getParent();
        JsonNode config = null;
        if (dir != null && Files.isRegularFile(dir.resolve("tokenizer_config.json"))) {
            config = new ObjectMapper().readTree(dir.resolve("tokenizer_config.json").toFile());
        }
        String source = null;
        if (templateFile != null) {
            if (!Files.isRegularFile(templateFile)) {
                throw new IllegalArgumentException("--chat-template " + templateFile + ": no such file");
            }
            source = Files.readString(templateFile, StandardCharsets.UTF_8);
        } else if (dir != null && Files.isRegularFile(dir.resolve("chat_template.jinja"))) {
            source = Files.readString(dir.resolve("chat_template.jinja"), StandardCharsets.UTF_8);
        } else if (config != null) {
            source = configTemplate(config.path("chat_template"));
        }
        if (source == null) {
            return null;
        }
        return new JinjaChatTemplate(source, specialTokens(config));
    }

    private static String configTemplate(JsonNode t) {
        if (t.isTextual()) {
            return t.asText();
        }
        if (t.isArray()) {
            for (JsonNode named : t) {
                if (named.path("name").asText().equals("default") && named.path("template").isTextual()) {
                    return named.path("template").asText();
                }
            }
            throw new IllegalArgumentException("tokenizer_config.json lists chat templates but none named default");
        }
        return null;
    }

    /** The {@code *_token} entries of a tokenizer_config.json: strings, or objects whose content is the token. */
    private static Map<String, String> specialTokens(JsonNode config) {
        Map<String, String> tokens = new LinkedHashMap<>();
        if (config == null) {
            return tokens;
        }
        config.properties().forEach(e -> {
            JsonNode v = e.getValue();
            if (e.getKey().endsWith("_token")) {
                if (v.isTextual()) {
                    tokens.put(e.getKey(), v.asText());
                } else if (v.path("content").isTextual()) {
                    tokens.put(e.getKey(), v.path("content").asText());
                }
            }
        });
        return tokens;
    }
}
