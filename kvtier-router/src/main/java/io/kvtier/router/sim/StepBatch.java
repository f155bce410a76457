package io.kvtier.router.sim;

/**
 * The work of one engine step, as the cost model needs it: tokens prefilled (over all requests with a prompt chunk
 * this step) and requests decoding one token each, with the attention context each attends to. Immutable.
 *
 * @param prefillTokens     prompt tokens computed this step
 * @param prefillAttention  sum over those tokens of the positions each attends to (causal: a chunk of {@code c}
 *                          tokens after {@code s} computed ones adds {@code c*s + c*(c+1)/2})
 * @param prefillKvReads    tokens of KV the prefill chunks read back (each chunk reads its request's {@code s} earlier
 *                          tokens once)
 * @param decodeSeqs        requests decoding one token
 * @param decodeContext     sum of those requests' context lengths (tokens of KV each reads)
 */
public record StepBatch(long prefillTokens, long prefillAttention, long prefillKvReads, int decodeSeqs,
                        long decodeContext) {
    public static final StepBatch EMPTY = new StepBatch(0, 0, 0, 0, 0);

    public boolean isEmpty() {
        return prefillTokens == 0 && decodeSeqs == 0;
    }

    /** Adds a prompt chunk of {@code tokens} tokens after {@code computed} tokens of its request. */
    public StepBatch plusPrefill(long computed, long tokens) {
        return new StepBatch(prefillTokens + tokens, prefillAttention + tokens * computed + tokens * (tokens + 1) / 2,
                prefillKvReads + computed, decodeSeqs, decodeContext);
    }

    /** Adds a request decoding its next token with {@code context} tokens before it. */
    public StepBatch plusDecode(long context) {
        return new StepBatch(prefillTokens, prefillAttention, prefillKvReads, decodeSeqs + 1,
                decodeContext + context + 1);
    }
}
