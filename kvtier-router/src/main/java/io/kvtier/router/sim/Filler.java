package io.kvtier.router.sim;

/** The emulator's answers: one filler word per generated token, the same for every request. */
final class Filler {
    private static final String[] WORDS = {"lorem ", "ipsum ", "dolor ", "sit ", "amet "};

    private Filler() {
    }

    static String word(int t) {
        return WORDS[t % WORDS.length];
    }

    static String text(int tokens) {
        StringBuilder out = new StringBuilder();
        for (int t = 0; t < tokens; t++) {
            out.append(word(t));
        }
        return out.toString();
    }
}
