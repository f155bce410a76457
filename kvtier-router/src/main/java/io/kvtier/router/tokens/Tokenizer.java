package io.kvtier.router.tokens;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Turns prompt text into the token ids a model sees; implementations are thread-safe. */
public interface Tokenizer {
    /**
     * The ids of {@code text}, with the tokenizer's special tokens (a BOS) where {@code addSpecialTokens}: vLLM adds
     * them to a completion's prompt, and not to a chat prompt, whose template writes them as text.
     */
    int[] encode(String text, boolean addSpecialTokens);

    /** A completion prompt's ids, as vLLM tokenizes it (special tokens added). */
    default int[] encode(String text) {
        return encode(text, true);
    }

    /**
     * One token per UTF-8 byte, no special tokens: what the router and the engine emulator use when no model tokenizer
     * is given, so that both see the same ids for the same text. Not any real model's tokenization.
     */
    static Tokenizer bytes() {
        return (text, special) -> {
            byte[] b = text.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            int[] ids = new int[b.length];
            for (int i = 0; i < b.length; i++) {
                ids[i] = b[i] & 0xFF;
            }
            return ids;
        };
    }

    /** The model's own tokenizer: a Hugging Face {@code tokenizer.json}, or a directory holding one. */
    static Tokenizer load(Path path) throws IOException {
        Path file = Files.isDirectory(path) ? path.resolve("tokenizer.json") : path;
        if (!Files.isRegularFile(file)) {
            throw new IllegalArgumentException("--tokenizer " + path + ": no tokenizer.json there");
        }
        return HuggingFaceTokenizer.load(file);
    }
}
