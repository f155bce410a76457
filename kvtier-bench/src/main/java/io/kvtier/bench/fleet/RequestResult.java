package io.kvtier.bench.fleet;

/**
 * What the client saw of one request, times from {@link System#nanoTime()}: sent, first token (the first SSE event
 * with text), last byte; the usage vLLM reported ({@code cachedTokens}: prompt_tokens_details.cached_tokens, tokens
 * the engine did not prefill: its GPU prefix cache and what its connector loaded); {@code error} null when the request
 * completed, else why not (HTTP status and message, timeout, connection refused). Immutable.
 */
public record RequestResult(FleetRequest request, long sentNanos, long firstTokenNanos, long endNanos,
                            int promptTokens, int completionTokens, int cachedTokens, String error) {
    public boolean ok() {
        return error == null;
    }

    /** Time to first token, seconds. */
    public double ttftSeconds() {
        return (firstTokenNanos - sentNanos) / 1e9;
    }

    /** Time per output token after the first, seconds (vLLM's benchmark_serving definition); NaN for one token. */
    public double tpotSeconds() {
        return completionTokens > 1 ? (endNanos - firstTokenNanos) / 1e9 / (completionTokens - 1) : Double.NaN;
    }
}
