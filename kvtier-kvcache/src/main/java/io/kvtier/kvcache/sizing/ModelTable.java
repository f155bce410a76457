package io.kvtier.kvcache.sizing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * The built-in models of {@code kvtier size}: common vLLM models, each kept as its Hugging Face config.json cut to
 * the fields the arithmetic reads ({@code models.json} beside this class, with each model's source), and read through
 * {@link HfConfig} like a user's own config. Immutable, loaded once.
 */
public final class ModelTable {
    /** A table entry: the model and the parameter count its publisher states (for people; the arithmetic estimates). */
    public record Entry(ModelSpec spec, String hfId, String publishedParameters) {
    }

    private static final List<Entry> ENTRIES = load();

    private ModelTable() {
    }

    public static List<Entry> entries() {
        return ENTRIES;
    }

    /** The model named {@code name} (its short name or Hugging Face id), case-insensitive; an unknown name is an error that lists the known ones. */
    public static ModelSpec find(String name) {
        String key = name.trim().toLowerCase(Locale.ROOT);
        for (Entry e : ENTRIES) {
            if (e.spec().name().equals(key) || e.hfId().toLowerCase(Locale.ROOT).equals(key)) {
                return e.spec();
            }
        }
        List<String> names = ENTRIES.stream().map(e -> e.spec().name()).toList();
        throw new IllegalArgumentException("--model " + name + " is not in the built-in table (" + String.join(", ",
                names) + "); give its config.json with --config instead");
    }

    private static List<Entry> load() {
        try (InputStream in = ModelTable.class.getResourceAsStream("models.json")) {
            if (in == null) {
                throw new IllegalStateException("models.json is missing from the classpath");
            }
            JsonNode root = new ObjectMapper().readTree(in);
            List<Entry> entries = new ArrayList<>();
            for (JsonNode m : root.get("models")) {
                ModelSpec spec = HfConfig.parse(m.get("config"), m.get("name").asText(), m.get("source").asText());
                entries.add(new Entry(spec, m.get("hf_id").asText(), m.get("published_parameters").asText()));
            }
            return Collections.unmodifiableList(entries);
        } catch (IOException e) {
            throw new UncheckedIOException("reading the built-in model table", e);
        }
    }
}
