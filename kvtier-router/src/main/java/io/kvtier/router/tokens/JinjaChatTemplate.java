package io.kvtier.router.tokens;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.JinjavaConfig;
import com.hubspot.jinjava.LegacyOverrides;
import com.hubspot.jinjava.el.JinjavaInterpreterResolver;
import com.hubspot.jinjava.interpret.RenderResult;
import com.hubspot.jinjava.interpret.TemplateError;
import com.hubspot.jinjava.lib.fn.ELFunctionDefinition;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import jinjava.javax.el.CompositeELResolver;

/**
 * A Hugging Face chat template (Jinja) rendered with Jinjava, set up to render as transformers' Jinja2 environment
 * does (trim_blocks, lstrip_blocks; {@code raise_exception}, {@code strftime_now}; {@code tojson} as Python's
 * json.dumps; the Python string methods templates call, {@link PythonStrings}). Checked byte for byte against Jinja2's
 * renders of templates in the shapes of Llama 3's, ChatML's and Mistral's (ChatTemplateTest). Differences left: a
 * boolean or None printed bare renders as Java does ({@code true}, empty), not as Python's {@code True}/{@code None};
 * templates print them through tojson or tests.
 */
final class JinjaChatTemplate implements ChatTemplate {
    /** A bound on one render's output: far beyond any prompt an engine takes, short of filling the router's heap. */
    static final long MAX_OUTPUT_BYTES = 64L << 20;
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Jinjava jinjava;
    private final String source;
    private final Map<String, String> specialTokens;

    JinjaChatTemplate(String source, Map<String, String> specialTokens) {
        CompositeELResolver resolver = new CompositeELResolver();
        resolver.add(new PythonStrings());
        resolver.add(JinjavaInterpreterResolver.DEFAULT_RESOLVER_READ_ONLY);
        // Jinja2's semantics where Jinjava keeps its own by default: operator precedence, whitespace control on
        // expressions, map keys evaluated and iterated, Python reprs of printed lists and dicts.
        LegacyOverrides jinja2 = LegacyOverrides.newBuilder().withUseNaturalOperatorPrecedence(true)
                .withParseWhitespaceControlStrictly(true).withUseTrimmingForNotesAndExpressions(true)
                .withAllowAdjacentTextNodes(true).withEvaluateMapKeys(true).withIterateOverMapKeys(true)
                .withUsePyishObjectMapper(true).withKeepNullableLoopValues(true).build();
        this.jinjava = new Jinjava(JinjavaConfig.newBuilder().withTrimBlocks(true).withLstripBlocks(true)
                .withLegacyOverrides(jinja2).withElResolver(resolver).withMaxOutputSize(MAX_OUTPUT_BYTES).build());
        jinjava.getGlobalContext().registerFunction(new ELFunctionDefinition("", "raise_exception",
                JinjaChatTemplate.class, "raiseException", String.class));
        jinjava.getGlobalContext().registerFunction(new ELFunctionDefinition("", "strftime_now",
                PythonStrings.class, "strftimeNow", String.class));
        jinjava.getGlobalContext().registerFilter(new PythonJson.ToJsonFilter());
        this.source = Jinja2Syntax.rewrite(source);
        this.specialTokens = Map.copyOf(specialTokens);
    }

    /** The template's {@code raise_exception(message)}: the request is refused with its message. */
    public static Object raiseException(String message) {
        throw new TemplateRefusal(message);
    }

    @Override
    public String render(JsonNode request) {
        JsonNode messages = request.path("messages");
        if (!messages.isArray() || messages.isEmpty()) {
            throw new IllegalArgumentException("messages must be a non-empty array");
        }
        Map<String, Object> vars = new HashMap<>(specialTokens);
        JsonNode kwargs = request.path("chat_template_kwargs");
        if (kwargs.isObject()) {
            kwargs.properties().forEach(e -> vars.put(e.getKey(), toJava(e.getValue())));
        }
        List<Object> msgs = new ArrayList<>();
        for (JsonNode m : messages) {
            Object message = toJava(m);
            if (message instanceof Map<?, ?> map && m.path("content").isArray()) {
                @SuppressWarnings("unchecked")
                Map<String, Object> withText = (Map<String, Object>) map;
                withText.put("content", text(m.path("content")));
            }
            msgs.add(message);
        }
        vars.put("messages", msgs);
        vars.put("tools", request.path("tools").isArray() ? toJava(request.path("tools")) : null);
        vars.put("add_generation_prompt", request.path("add_generation_prompt").asBoolean(true));
        RenderResult result = jinjava.renderForResult(source, vars);
        for (TemplateError e : result.getErrors()) {
            for (Throwable t = e.getException(); t != null; t = t.getCause()) {
                if (t instanceof TemplateRefusal refusal) {
                    throw new IllegalArgumentException(refusal.getMessage());
                }
            }
        }
        for (TemplateError e : result.getErrors()) {
            if (e.getSeverity() == TemplateError.ErrorType.FATAL) {
                throw new IllegalArgumentException("the chat template failed on this request: " + e.getMessage()
                        + (e.getLineno() > 0 ? " (line " + e.getLineno() + ")" : ""));
            }
        }
        return result.getOutput();
    }

    /**
     * A message content given as a list of parts, as vLLM hands it to a template that expects a string: the text
     * parts joined by newlines (images and other parts are not text the router can score).
     */
    private static String text(JsonNode parts) {
        List<String> texts = new ArrayList<>();
        for (JsonNode part : parts) {
            if (part.path("type").asText().equals("text")) {
                texts.add(part.path("text").asText());
            }
        }
        return String.join("\n", texts);
    }

    /**
     * JSON as the Python values a template sees: objects as maps in their order, arrays as lists, strings, integers,
     * floats, booleans, null (Jackson's own untyped mapping).
     */
    static Object toJava(JsonNode n) {
        return JSON.convertValue(n, Object.class);
    }

    /** What {@code raise_exception} throws: the template's own refusal of a request. */
    static final class TemplateRefusal extends RuntimeException {
        TemplateRefusal(String message) {
            super(message, null, false, false);
        }
    }
}
