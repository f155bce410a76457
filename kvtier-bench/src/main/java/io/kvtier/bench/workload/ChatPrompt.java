package io.kvtier.bench.workload;

/**
 * The tokens of one chat prompt and the hashes LMCache gives its chunks. A prompt is a shared system prompt
 * followed by one conversation's history and new turn; token ids are a pure function of (system prompt, position)
 * or (conversation, position), so every conversation with the same system prompt shares its leading chunks, and a
 * conversation's history is the same at every turn.
 *
 * <p>Chunk hashes chain like LMCache's token database ({@code prefix_hash = hash((prefix_hash, chunk_tokens))}):
 * chunk k's hash covers chunk k's tokens and chunk k-1's hash, so equal hashes mean equal prefixes. Only full
 * chunks are hashed: the trailing partial chunk is neither looked up nor stored. Immutable.
 *
 * @param systemPrompt  identity of the system prompt
 * @param conversation  identity of the conversation (a restarted conversation gets a new one)
 * @param systemTokens  length of the system prompt
 * @param length        total tokens of the prompt
 */
record ChatPrompt(long systemPrompt, long conversation, int systemTokens, int length) {
    private static final long CHAIN_START = 0x5eed_c4a1_7ab1_e000L;

    int token(int position) {
        long source = position < systemTokens ? systemPrompt : conversation;
        return (int) mix(source * 0x9E3779B97F4A7C15L + position) & 0x7fff_ffff;
    }

    /** Hashes of the {@code length / chunkTokens} full chunks, in order. */
    long[] chunkHashes(int chunkTokens) {
        long[] hashes = new long[length / chunkTokens];
        long prefix = CHAIN_START;
        for (int k = 0; k < hashes.length; k++) {
            long h = prefix;
            for (int p = k * chunkTokens; p < (k + 1) * chunkTokens; p++) {
                h = Long.rotateLeft(h ^ token(p), 23) * 0xc6a4a7935bd1e995L;
            }
            prefix = mix(h);
            hashes[k] = prefix;
        }
        return hashes;
    }

    /** SplitMix64's finalizer. */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
