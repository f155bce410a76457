package io.kvtier.router.tokens;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Chat templates in the shapes of Llama 3's, ChatML's (Qwen's) and Mistral's, rendered by Jinja2 as transformers sets
 * it up (src/test/python/chat_template_vectors.py wrote cases.json), render byte for byte the same here, refusals
 * included.
 */
class ChatTemplateTest {
    private static final Path DIR = Path.of("src/test/resources/chat");
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void rendersAsJinja2DoesInTransformers() throws Exception {
        JsonNode doc = JSON.readTree(DIR.resolve("cases.json").toFile());
        Map<String, String> specials = new LinkedHashMap<>();
        doc.path("specials").properties().forEach(e -> specials.put(e.getKey(), e.getValue().asText()));
        int rendered = 0;
        int refused = 0;
        for (JsonNode c : doc.path("cases")) {
            String source = Files.readString(DIR.resolve(c.path("template").asText()), StandardCharsets.UTF_8);
            ObjectNode request = c.path("request").deepCopy();
            ObjectNode kwargs = request.has("chat_template_kwargs") ? (ObjectNode) request.get("chat_template_kwargs")
                    : request.putObject("chat_template_kwargs");
            doc.path("variables").properties().forEach(e -> kwargs.set(e.getKey(), e.getValue()));
            ChatTemplate template = new JinjaChatTemplate(source, specials);
            if (c.has("error")) {
                assertThatThrownBy(() -> template.render(request)).as(c.toString())
                        .isInstanceOf(IllegalArgumentException.class).hasMessage(c.path("error").asText());
                refused++;
            } else {
                assertThat(template.render(request)).as(c.path("template").asText() + " " + c.path("request"))
                        .isEqualTo(c.path("rendered").asText());
                rendered++;
            }
        }
        assertThat(rendered).isEqualTo(10);
        assertThat(refused).isEqualTo(2);
    }

    @Test
    void loadsTheTemplateAndSpecialTokensFromTheTokenizersDirectory(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("tokenizer_config.json"), """
                {"bos_token": {"content": "<|begin|>", "lstrip": false}, "eos_token": "<|end|>",
                 "chat_template": [{"name": "tool_use", "template": "tools"},
                                   {"name": "default", "template": "{{ bos_token }}{{ messages[0].content }}{{ eos_token }}"}]}
                """);
        ChatTemplate t = ChatTemplate.load(dir, null);
        assertThat(t.render(JSON.readTree("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")))
                .isEqualTo("<|begin|>hi<|end|>");
        // chat_template.jinja beside it wins over the config's, as in transformers; --chat-template over both.
        Files.writeString(dir.resolve("chat_template.jinja"), "[{{ messages | length }}]");
        assertThat(ChatTemplate.load(dir.resolve("tokenizer.json"), null)
                .render(JSON.readTree("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"))).isEqualTo("[1]");
        Path own = Files.writeString(dir.resolve("own.jinja"), "{{ messages[0]['content'] | upper }}");
        assertThat(ChatTemplate.load(dir, own).render(JSON.readTree(
                "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\"},"
                        + "{\"type\":\"image_url\",\"image_url\":{}},{\"type\":\"text\",\"text\":\"b\"}]}]}")))
                .isEqualTo("A\nB");
        assertThat(ChatTemplate.load(null, null)).isNull();
        assertThat(ChatTemplate.load(Files.createDirectory(dir.resolve("bare")), null)).isNull();
        assertThatThrownBy(() -> ChatTemplate.load(dir, dir.resolve("nope.jinja")))
                .hasMessageContaining("no such file");
    }

    @Test
    void aTemplateThatFailsOrAnEmptyRequestIsABadRequest() {
        ChatTemplate t = new JinjaChatTemplate("{{ messages[0].content.nosuchmethod() }}", Map.of());
        assertThatThrownBy(() -> t.render(JSON.createObjectNode().set("messages", JSON.createArrayNode()
                .add(JSON.createObjectNode().put("role", "user").put("content", "x")))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("chat template failed");
        assertThatThrownBy(() -> t.render(JSON.createObjectNode())).hasMessageContaining("messages");
    }

    @Test
    void pythonHelpersMatchPython() {
        // Values as Python's json.dumps / repr / strftime give them.
        assertThat(PythonJson.floatRepr(0.5)).isEqualTo("0.5");
        assertThat(PythonJson.floatRepr(100.0)).isEqualTo("100.0");
        assertThat(PythonJson.floatRepr(1e16)).isEqualTo("1e+16");
        assertThat(PythonJson.floatRepr(1e-5)).isEqualTo("1e-05");
        assertThat(PythonJson.floatRepr(-0.0001)).isEqualTo("-0.0001");
        assertThat(PythonJson.floatRepr(123456789.125)).isEqualTo("123456789.125");
        assertThat(PythonJson.dumps(List.of(Map.of("a", 1)), 2, null, null, false)).isEqualTo("[\n  {\n    \"a\": 1\n  }\n]");
        assertThat(PythonJson.dumps("\u0001é\"", null, null, null, false)).isEqualTo("\"\\u0001é\\\"\"");
        assertThat(PythonStrings.strftime(LocalDateTime.of(2026, 11, 5, 9, 7, 3), "%d %b %Y %H:%M:%S %A %%"))
                .isEqualTo("05 Nov 2026 09:07:03 Thursday %");
    }
}
