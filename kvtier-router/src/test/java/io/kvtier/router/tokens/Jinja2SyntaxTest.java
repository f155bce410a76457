package io.kvtier.router.tokens;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Jinja2 syntax Jinjava would read otherwise, rewritten before parsing, and rendered as Jinja2 renders it. */
class Jinja2SyntaxTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static String render(String template, String kwargs) throws Exception {
        return new JinjaChatTemplate(template, Map.of()).render(JSON.readTree(
                "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"chat_template_kwargs\":" + kwargs + "}"));
    }

    @Test
    void notBindsLooserThanATest() throws Exception {
        // Jinja2: `not x is defined` is `not (x is defined)`; Jinjava read it as `(not x) is defined`, always true
        String t = "{% if not date_string is defined %}now{% else %}{{ date_string }}{% endif %}";
        assertThat(render(t, "{\"date_string\": \"25 Nov 2026\"}")).isEqualTo("25 Nov 2026");
        assertThat(render(t, "{}")).isEqualTo("now");
        String twice = "{{ 'a' if not messages[0]['role'] is not defined else 'b' }}|{{ not x is sameas false }}";
        assertThat(render(twice, "{\"x\": false}")).isEqualTo("a|false");
        assertThat(render("{{ not messages|length is divisibleby(2) and true }}", "{}")).isEqualTo("true");
    }

    @Test
    void theRewriteLeavesStringsTextAndOtherNotsAlone() {
        assertThat(Jinja2Syntax.rewrite("not x is defined {{ 'not x is defined' }} {% if not x %}{% endif %}"))
                .isEqualTo("not x is defined {{ 'not x is defined' }} {% if not x %}{% endif %}");
        assertThat(Jinja2Syntax.rewrite("{% if not tools is none and knot is defined %}"))
                .isEqualTo("{% if tools is not none and knot is defined %}");
        assertThat(Jinja2Syntax.rewrite("{{ not message.tool_calls[0]['id'] is not defined }}"))
                .isEqualTo("{{ message.tool_calls[0]['id'] is defined }}");
    }
}
