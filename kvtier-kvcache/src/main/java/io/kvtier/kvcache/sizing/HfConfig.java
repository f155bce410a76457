package io.kvtier.kvcache.sizing;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;

/**
 * Reads a Hugging Face {@code config.json} into a {@link ModelSpec}. Looks in {@code text_config} first (multimodal
 * configs such as Gemma 3 nest the language model there), then at the top level; fills in what transformers' config
 * classes default and real configs leave out ({@code num_key_value_heads} = heads, {@code head_dim} = hidden / heads,
 * tied embeddings, Gemma's vocabulary and 5:1 local:global layer pattern). A missing or malformed field that the
 * arithmetic needs is an {@link IllegalArgumentException} naming it. Stateless.
 */
public final class HfConfig {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    /** Defaults of transformers' config classes that published configs rely on, by model_type. */
    private static final Map<String, Map<String, Integer>> DEFAULTS = Map.of(
            "gemma3_text", Map.of("vocab_size", 262_208, "sliding_window_pattern", 6),
            "gemma2", Map.of("sliding_window_pattern", 2));

    private final JsonNode text;
    private final JsonNode root;
    private final String where;

    private HfConfig(JsonNode root, String where) {
        this.root = root;
        this.text = root.path("text_config").isObject() ? root.get("text_config") : root;
        this.where = where;
    }

    /**
     * Reads {@code file}; the model is named after its directory (or the file, when that says nothing). A file that
     * cannot be read is bad input too: an {@link IllegalArgumentException} naming it.
     */
    public static ModelSpec read(Path file) {
        String json;
        try {
            json = Files.readString(file);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("--config " + file + ": no such file");
        } catch (IOException e) {
            throw new IllegalArgumentException("--config " + file + ": cannot read it: " + e.getMessage());
        }
        Path dir = file.toAbsolutePath().getParent();
        String name = dir != null && dir.getFileName() != null ? dir.getFileName().toString() : file.toString();
        return parse(json, name, "config.json at " + file);
    }

    /** Parses the text of a config.json; {@code source} says where it came from, for the report. */
    public static ModelSpec parse(String json, String name, String source) {
        JsonNode root;
        try {
            root = MAPPER.readTree(json);
        } catch (JacksonException e) {
            throw new IllegalArgumentException(source + " is not JSON: " + e.getOriginalMessage());
        }
        return parse(root, name, source);
    }

    static ModelSpec parse(JsonNode root, String name, String source) {
        if (root == null || !root.isObject()) {
            throw new IllegalArgumentException(source + " is not a JSON object");
        }
        return new HfConfig(root, source).spec(name, source);
    }

    private ModelSpec spec(String name, String source) {
        Attention attention = attention();
        ParameterCount params = ParameterCount.of(this, attention);
        Precision dtype = dtype();
        Precision weights = dtype;
        Precision expertWeights = dtype;
        JsonNode quant = field("quantization_config");
        String method = quant == null ? "" : quant.path("quant_method").asText("").toLowerCase(Locale.ROOT);
        if (method.equals("fp8")) {
            weights = Precision.FP8;
            expertWeights = Precision.FP8;
        } else if (method.equals("mxfp4")) {
            expertWeights = Precision.MXFP4;
        } else if (quant != null && quant.path("bits").asInt() == 4) {
            weights = Precision.INT4;
            expertWeights = Precision.INT4;
        }
        return new ModelSpec(name, source, attention, params.total(), params.experts(), dtype, weights,
                expertWeights);
    }

    private Attention attention() {
        int layers = integer("num_hidden_layers");
        int heads = integer("num_attention_heads");
        int kvHeads = optionalInteger("num_key_value_heads", heads);
        int headDim = optionalInteger("head_dim", 0);
        if (headDim == 0) {
            int hidden = integer("hidden_size");
            if (hidden % heads != 0) {
                throw missing("head_dim", "hidden_size " + hidden + " is not a multiple of num_attention_heads "
                        + heads);
            }
            headDim = hidden / heads;
        }
        int latent = 0;
        if (isSet("kv_lora_rank")) {
            latent = integer("kv_lora_rank") + integer("qk_rope_head_dim");
        }
        int window = 0;
        int sliding = 0;
        // Qwen2/Qwen3 configs name a window but switch it off with use_sliding_window: false.
        if (isSet("sliding_window") && flag("use_sliding_window", true)) {
            window = integer("sliding_window");
            sliding = slidingLayers(layers);
        }
        return new Attention(layers, heads, kvHeads, headDim, latent, sliding == 0 ? 0 : window, sliding);
    }

    /**
     * How many layers use the sliding window: as {@code layer_types} lists them; else every layer but each
     * {@code sliding_window_pattern}-th (Gemma 2 and 3); else all (Mistral 7B v0.1's config form).
     */
    private int slidingLayers(int layers) {
        JsonNode types = field("layer_types");
        if (types != null && !types.isNull()) {
            if (!types.isArray() || types.size() != layers) {
                throw missing("layer_types", "expected a list of " + layers + " layer types");
            }
            int sliding = 0;
            for (JsonNode t : types) {
                sliding += "sliding_attention".equals(t.asText()) ? 1 : 0;
            }
            return sliding;
        }
        int pattern = optionalInteger("sliding_window_pattern", 0);
        return pattern > 0 ? layers - layers / pattern : layers;
    }

    private Precision dtype() {
        JsonNode d = field("torch_dtype");
        if (d == null || d.isNull()) {
            d = field("dtype");
        }
        if (d == null || d.isNull()) {
            return Precision.BF16;
        }
        try {
            Precision p = Precision.parse(d.asText());
            if (!p.isKvFormat()) {
                throw new IllegalArgumentException(p + " is not a compute dtype");
            }
            return p;
        } catch (IllegalArgumentException e) {
            throw missing("torch_dtype", e.getMessage());
        }
    }

    String modelType() {
        JsonNode t = text.path("model_type");
        return t.isTextual() ? t.asText() : root.path("model_type").asText("");
    }

    /** The field from text_config, else the top level; null when absent from both. */
    JsonNode field(String name) {
        JsonNode v = text.get(name);
        return v != null ? v : root.get(name);
    }

    /** Present and not null (nor a model-type default). */
    boolean isSet(String name) {
        JsonNode v = field(name);
        return v != null && !v.isNull() || defaultOf(name) != null;
    }

    /** A required non-negative integer field (or its model-type default). */
    int integer(String name) {
        JsonNode v = field(name);
        if (v == null || v.isNull()) {
            Integer d = defaultOf(name);
            if (d != null) {
                return d;
            }
            throw missing(name, "missing");
        }
        if (!v.canConvertToInt() || !v.isIntegralNumber() || v.asInt() < 0) {
            throw missing(name, "'" + v + "' is not a whole number");
        }
        return v.asInt();
    }

    int optionalInteger(String name, int otherwise) {
        return isSet(name) ? integer(name) : otherwise;
    }

    boolean flag(String name, boolean otherwise) {
        JsonNode v = field(name);
        return v == null || v.isNull() ? otherwise : v.asBoolean();
    }

    private Integer defaultOf(String name) {
        return DEFAULTS.getOrDefault(modelType(), Map.of()).get(name);
    }

    IllegalArgumentException missing(String name, String problem) {
        return new IllegalArgumentException(where + ": " + name + ": " + problem);
    }
}
