package io.kvtier.cli.simulate;

import static io.kvtier.cli.simulate.JsonLines.integer;
import static io.kvtier.cli.simulate.JsonLines.number;
import static io.kvtier.cli.simulate.JsonLines.required;

import io.kvtier.kvcache.simulate.BlockTrace;
import java.io.IOException;
import java.io.Reader;
import java.math.BigDecimal;
import java.util.List;
import java.util.Map;

/**
 * Reads a JSONL trace in Mooncake's format (its FAST'25 traces, {@code FAST25-release/traces/*.jsonl}; Dynamo and
 * aiperf replay it too): one request per line, {@code {"timestamp": 27482, "input_length": 6955, "output_length":
 * 52, "hash_ids": [46, 47, 48]}}, one id per block of the prompt. {@code timestamp} (milliseconds) is optional, on
 * all lines or none; {@code output_length} is optional, answers having no ids to be stored under. Blank lines are
 * skipped and other fields ignored. Errors name the line. Stateless.
 */
final class MooncakeTraceFile {
    private static final String EXAMPLE = "{\"timestamp\": 0, \"input_length\": 1200, \"output_length\": 50, "
            + "\"hash_ids\": [0, 1, 2]}";

    private MooncakeTraceFile() {
    }

    /** @param blockTokens the tokens of one block ({@code --chunk-tokens}; 512 in Mooncake's traces) */
    static BlockTrace read(Reader in, String name, int blockTokens) throws IOException {
        BlockTrace.Builder trace = BlockTrace.builder(blockTokens);
        JsonLines.forEach(in, name, EXAMPLE, o -> add(trace, o));
        return JsonLines.built(name, trace::build);
    }

    private static void add(BlockTrace.Builder trace, Map<?, ?> o) {
        Double time = o.get("timestamp") == null ? null : milliseconds(number(o, "timestamp")) / 1000;
        long output = o.get("output_length") == null ? 0 : integer(o, "output_length");
        trace.add(time, integer(o, "input_length"), output, ids(o));
    }

    private static double milliseconds(BigDecimal timestamp) {
        if (timestamp.signum() < 0) {
            throw new IllegalArgumentException("\"timestamp\" " + timestamp + " must be >= 0 (milliseconds)");
        }
        return timestamp.doubleValue();
    }

    private static long[] ids(Map<?, ?> o) {
        if (!(required(o, "hash_ids") instanceof List<?> list)) {
            throw new IllegalArgumentException("\"hash_ids\" must be a list of block ids, not " + o.get("hash_ids"));
        }
        long[] ids = new long[list.size()];
        for (int k = 0; k < ids.length; k++) {
            ids[k] = id(k, list.get(k));
        }
        return ids;
    }

    private static long id(int k, Object value) {
        try {
            if (value instanceof BigDecimal n && n.signum() >= 0) {
                return n.longValueExact();
            }
        } catch (ArithmeticException e) {
            // not a whole number, or too large: the message below
        }
        throw new IllegalArgumentException("\"hash_ids\"[" + k + "] must be a whole number >= 0, not " + value);
    }
}
