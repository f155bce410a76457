package io.kvtier.cli.simulate;

import static io.kvtier.cli.simulate.JsonLines.integer;
import static io.kvtier.cli.simulate.JsonLines.number;
import static io.kvtier.cli.simulate.JsonLines.required;
import static io.kvtier.cli.simulate.JsonLines.string;

import io.kvtier.kvcache.simulate.Trace;
import java.io.IOException;
import java.io.Reader;
import java.math.BigDecimal;
import java.util.Map;

/**
 * Reads a JSONL trace in kvtier's chat format: one object per line, {@code {"session": "u1", "turn": 3,
 * "prompt_tokens": 5120, "new_tokens": 256}}, with optional {@code "time"} (seconds; all lines or none) and
 * {@code "prefix"} + {@code "prefix_tokens"} (a shared system prompt the session's prompts start with). Blank lines
 * are skipped and other fields ignored. Errors name the line. Mooncake's format is {@link MooncakeTraceFile}'s;
 * {@link TraceFormat} tells them apart. Stateless.
 */
final class TraceFile {
    private static final String EXAMPLE = "{\"session\": \"u1\", \"turn\": 0, \"prompt_tokens\": 1024, "
            + "\"new_tokens\": 256}";

    private TraceFile() {
    }

    static Trace read(Reader in, String name) throws IOException {
        Trace.Builder trace = Trace.builder();
        JsonLines.forEach(in, name, EXAMPLE, o -> add(trace, o));
        return JsonLines.built(name, trace::build);
    }

    private static void add(Trace.Builder trace, Map<?, ?> o) {
        Object session = required(o, "session");
        if (!(session instanceof String) && !(session instanceof BigDecimal)) {
            throw new IllegalArgumentException("\"session\" must be a string or a number");
        }
        String prefix = o.get("prefix") == null ? null : string(o, "prefix");
        long prefixTokens = prefix == null ? 0 : integer(o, "prefix_tokens");
        Double time = o.get("time") == null ? null : number(o, "time").doubleValue();
        trace.add(session instanceof BigDecimal n ? n.toPlainString() : (String) session, integer(o, "turn"), time,
                integer(o, "prompt_tokens"), integer(o, "new_tokens"), prefix, prefixTokens);
    }
}
