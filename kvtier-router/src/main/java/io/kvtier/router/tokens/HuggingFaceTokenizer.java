package io.kvtier.router.tokens;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

/**
 * A model's Hugging Face tokenizer ({@code tokenizer.json}), run by the tokenizers library itself (Rust, through DJL's
 * binding), so that the router's ids are the engine's. Thread-safe: the library's tokenizer is immutable.
 */
final class HuggingFaceTokenizer implements Tokenizer {
    private final ai.djl.huggingface.tokenizers.HuggingFaceTokenizer withSpecial;
    private final ai.djl.huggingface.tokenizers.HuggingFaceTokenizer plain;

    private HuggingFaceTokenizer(ai.djl.huggingface.tokenizers.HuggingFaceTokenizer withSpecial,
            ai.djl.huggingface.tokenizers.HuggingFaceTokenizer plain) {
        this.withSpecial = withSpecial;
        this.plain = plain;
    }

    static HuggingFaceTokenizer load(Path file) throws IOException {
        // No truncation, no padding: a prompt's ids as the model sees them, however long.
        Map<String, String> common = Map.of("truncation", "false", "padding", "false", "maxLength", "-1");
        return new HuggingFaceTokenizer(
                ai.djl.huggingface.tokenizers.HuggingFaceTokenizer.newInstance(file, with(common, "true")),
                ai.djl.huggingface.tokenizers.HuggingFaceTokenizer.newInstance(file, with(common, "false")));
    }

    private static Map<String, String> with(Map<String, String> common, String addSpecialTokens) {
        Map<String, String> options = new java.util.HashMap<>(common);
        options.put("addSpecialTokens", addSpecialTokens);
        return options;
    }

    @Override
    public int[] encode(String text, boolean addSpecialTokens) {
        long[] ids = (addSpecialTokens ? withSpecial : plain).encode(text).getIds();
        int[] out = new int[ids.length];
        for (int i = 0; i < ids.length; i++) {
            out[i] = Math.toIntExact(ids[i]);
        }
        return out;
    }
}
