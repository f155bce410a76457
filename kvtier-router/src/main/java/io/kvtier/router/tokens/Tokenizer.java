package io.kvtier.router.tokens;

/** Turns prompt text into the token ids a model sees; implementations are thread-safe. */
public interface Tokenizer {
    int[] encode(String text);

    /**
     * One token per UTF-8 byte: what the router and the engine emulator use when no model tokenizer is given, so that
     * both see the same ids for the same text. Not any real model's tokenization.
     */
    static Tokenizer bytes() {
        return text -> {
            byte[] b = text.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            int[] ids = new int[b.length];
            for (int i = 0; i < b.length; i++) {
                ids[i] = b[i] & 0xFF;
            }
            return ids;
        };
    }
}
