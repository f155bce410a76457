package io.kvtier.bench.fleet;

import io.kvtier.common.Json;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.Reader;
import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * A request trace in Mooncake's format (its FAST'25 traces, {@code FAST25-release/traces/*.jsonl}, and the
 * {@code mooncake_trace.jsonl} that Dynamo and aiperf replay): one request per line, {@code {"timestamp": 27482,
 * "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, 48]}}, the timestamp in milliseconds since the
 * trace began, one hash id per block of {@value #BLOCK_TOKENS} prompt tokens (the last block may be partial), equal
 * ids at the same place meaning equal prefixes. Other members are ignored, blank lines skipped; requests are kept in
 * time order (lines out of order are sorted, ties keeping file order). Immutable.
 *
 * <p>Prompts are made of token ids: block {@code h}'s {@value #BLOCK_TOKENS} ids are a function of (seed, h) only,
 * so equal hash ids give equal tokens in every request, and a prompt is its blocks' ids cut to
 * {@code input_length}; where {@code input_length} is longer than its blocks, the rest are ids of that request
 * alone. {@link Replay} sends them on the trace's timestamps.
 *
 * <p>kvtier-cli's {@code simulate} reads the same format ({@code MooncakeTraceFile}, into kvcache's
 * {@code BlockTrace}), but that reader lives in the CLI, which depends on this module, and {@code BlockTrace} keeps
 * no timestamps; one reader in kvtier-kvcache for both is the better home.
 */
public final class MooncakeTrace {
    /** Tokens per hash id in Mooncake's traces. */
    public static final int BLOCK_TOKENS = 512;
    private static final long BLOCK = 5;
    private static final long FILL = 6;
    private static final String EXAMPLE = "{\"timestamp\": 0, \"input_length\": 1200, \"output_length\": 50, "
            + "\"hash_ids\": [0, 1, 2]}";

    private final List<Line> lines;

    /**
     * One request of the trace.
     *
     * @param line            its line in the file, from 1
     * @param timestampNanos  when it arrives, since the trace began
     * @param inputLength     prompt tokens
     * @param outputLength    answer tokens ({@code max_tokens}); 0 in the file is sent as 1, vLLM's least
     * @param hashIds         its blocks' ids; not copied, not to be changed
     */
    public record Line(int line, long timestampNanos, int inputLength, int outputLength, long[] hashIds) {
    }

    private MooncakeTrace(List<Line> lines) {
        this.lines = lines;
    }

    /** Reads the trace in {@code file}; errors as {@link #parse}'s. */
    public static MooncakeTrace load(Path file) throws IOException {
        try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            return parse(in, file.toString());
        }
    }

    /**
     * Reads a trace from {@code in}.
     *
     * @param name the file's name, for errors
     * @throws IllegalArgumentException {@code "<name> line <n>: <what is wrong>"}, or that the trace is empty
     */
    public static MooncakeTrace parse(Reader in, String name) throws IOException {
        BufferedReader reader = in instanceof BufferedReader b ? b : new BufferedReader(in);
        List<Line> lines = new ArrayList<>();
        int number = 0;
        String text;
        while ((text = reader.readLine()) != null) {
            number++;
            if (!text.isBlank()) {
                try {
                    lines.add(line(number, text));
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException(name + " line " + number + ": " + e.getMessage(), e);
                }
            }
        }
        if (lines.isEmpty()) {
            throw new IllegalArgumentException(name + ": the trace has no requests");
        }
        lines.sort(Comparator.comparingLong(Line::timestampNanos)); // stable: ties keep file order
        return new MooncakeTrace(List.copyOf(lines));
    }

    private static Line line(int number, String text) {
        if (!(Json.parse(text) instanceof Map<?, ?> o)) {
            throw new IllegalArgumentException("expected a JSON object like " + EXAMPLE);
        }
        BigDecimal millis = number(o, "timestamp");
        if (millis.signum() < 0) {
            throw new IllegalArgumentException("\"timestamp\" " + millis + " must be >= 0 (milliseconds)");
        }
        long nanos = millis.movePointRight(6).setScale(0, RoundingMode.HALF_UP).longValue();
        int input = (int) whole(o, "input_length", 1);
        int output = (int) whole(o, "output_length", 0);
        return new Line(number, nanos, input, Math.max(1, output), hashIds(o));
    }

    private static BigDecimal number(Map<?, ?> o, String field) {
        Object v = o.get(field);
        if (v == null) {
            throw new IllegalArgumentException("\"" + field + "\" is missing; a line looks like " + EXAMPLE);
        }
        if (!(v instanceof BigDecimal n)) {
            throw new IllegalArgumentException("\"" + field + "\" must be a number, not " + v);
        }
        return n;
    }

    private static long whole(Map<?, ?> o, String field, long min) {
        BigDecimal n = number(o, field);
        try {
            long v = n.longValueExact();
            if (v >= min && v <= Integer.MAX_VALUE) {
                return v;
            }
        } catch (ArithmeticException e) {
            // not whole: the message below
        }
        throw new IllegalArgumentException("\"" + field + "\" " + n + " must be a whole number from " + min + " to "
                + Integer.MAX_VALUE);
    }

    private static long[] hashIds(Map<?, ?> o) {
        if (!(o.get("hash_ids") instanceof List<?> list)) {
            throw new IllegalArgumentException("\"hash_ids\" must be a list of block ids, not " + o.get("hash_ids"));
        }
        long[] ids = new long[list.size()];
        for (int k = 0; k < ids.length; k++) {
            try {
                if (list.get(k) instanceof BigDecimal n && n.signum() >= 0) {
                    ids[k] = n.longValueExact();
                    continue;
                }
            } catch (ArithmeticException e) {
                // not whole, or too large: the message below
            }
            throw new IllegalArgumentException("\"hash_ids\"[" + k + "] must be a whole number >= 0, not "
                    + list.get(k));
        }
        return ids;
    }

    /** Requests, in time order. */
    public int size() {
        return lines.size();
    }

    public Line line(int request) {
        return lines.get(request);
    }

    /** The last request's timestamp: how long the trace lasts, and the period when it loops. */
    public long spanNanos() {
        return lines.getLast().timestampNanos();
    }

    /**
     * The prompt of request {@code request} (in time order): its blocks' ids, cut to {@code input_length}, then ids of
     * its own where the blocks are too few. A new array each call.
     */
    public int[] prompt(int request, long seed) {
        Line line = lines.get(request);
        int[] prompt = new int[line.inputLength()];
        int at = 0;
        for (int k = 0; k < line.hashIds().length && at < prompt.length; k++) {
            int n = Math.min(BLOCK_TOKENS, prompt.length - at);
            TokenIds.fill(prompt, at, TokenIds.stream(seed, BLOCK, line.hashIds()[k], 0), 0, n);
            at += n;
        }
        TokenIds.fill(prompt, at, TokenIds.stream(seed, FILL, request, 0), at, prompt.length - at);
        return prompt;
    }

    /** Request {@code request} as sent: user {@code trace}, round the request's index in time order. */
    public FleetRequest request(int request, long seed) {
        return new FleetRequest("trace", request, prompt(request, seed), lines.get(request).outputLength());
    }

    /** This trace replayed on its timestamps, with seed 0: see {@link #replay(double, boolean, long)}. */
    public Replay replay(double speedup, boolean loop) {
        return replay(speedup, loop, 0);
    }

    /**
     * This trace replayed on its timestamps.
     *
     * @param speedup how much faster than recorded: the sweep's rate knob
     * @param loop    whether to start again (the timestamps offset by the span) when the point outlasts the trace
     * @param seed    names the token ids; another seed per point keeps a point from hitting an earlier one's KV
     */
    public Replay replay(double speedup, boolean loop, long seed) {
        return new Replay(this, speedup, loop, seed, System::nanoTime, Sleeper.system());
    }

    /**
     * Sends a trace's requests at {@code start + timestamp / speedup}, open loop: never early; late only when the
     * sender is slow to take a request (or the machine to wake the pacer), and then at once, counting the lateness.
     * Looping, pass {@code p} sends at {@code start + (timestamp + p x span) / speedup}, its requests' tokens the same
     * as the first pass's (so a later pass finds the trace's prefixes cached, as replaying it again would); not
     * looping, {@link #run} returns when the last request is sent, which may be before the point's end. Not
     * thread-safe: one {@link #run} at a time; the counters may be read from any thread.
     */
    public static final class Replay implements FleetWorkload {
        private final MooncakeTrace trace;
        private final double speedup;
        private final boolean loop;
        private final long seed;
        private final LongSupplier clock;
        private final Sleeper sleeper;
        private volatile long sent;
        private volatile long latenessSumNanos;
        private volatile long maxLatenessNanos;

        Replay(MooncakeTrace trace, double speedup, boolean loop, long seed, LongSupplier clock,
                Sleeper sleeper) {
            this.trace = Objects.requireNonNull(trace, "trace");
            if (!(speedup > 0) || Double.isInfinite(speedup)) {
                throw new IllegalArgumentException("speedup " + speedup + " must be a positive number");
            }
            if (trace.spanNanos() == 0) {
                throw new IllegalArgumentException("the trace's requests all arrive at 0 ms: it has no rate to replay"
                        + " (a trace needs timestamps that span some time)");
            }
            this.speedup = speedup;
            this.loop = loop;
            this.seed = seed;
            this.clock = Objects.requireNonNull(clock, "clock");
            this.sleeper = Objects.requireNonNull(sleeper, "sleeper");
        }

        @Override
        public String rateLabel() {
            return "trace x" + new BigDecimal(speedup, new MathContext(4)).stripTrailingZeros()
                    .toPlainString();
        }

        /** The trace's lines over its span, sped up. */
        @Override
        public double requestsPerSecond() {
            return trace.size() / (trace.spanNanos() / 1e9 / speedup);
        }

        /** When request {@code request} of pass {@code pass} is due, after the start. */
        long dueAfterStart(int request, long pass) {
            return Math.round((trace.line(request).timestampNanos() + (double) pass * trace.spanNanos()) / speedup);
        }

        @Override
        public void run(RequestSender sender, long endNanos, Consumer<RequestResult> results)
                throws InterruptedException {
            Objects.requireNonNull(sender, "sender");
            Objects.requireNonNull(results, "results");
            long start = clock.getAsLong();
            for (long pass = 0; pass == 0 || loop; pass++) {
                for (int i = 0; i < trace.size(); i++) {
                    long due = start + dueAfterStart(i, pass);
                    if (due - endNanos >= 0) {
                        return;
                    }
                    FleetRequest request = trace.request(i, seed); // made before the wait: sending stays quick
                    long now;
                    while ((now = clock.getAsLong()) - due < 0) {
                        sleeper.sleepUntil(due);
                    }
                    count(now - due);
                    sender.send(request).thenAccept(results);
                }
            }
        }

        /** Written by the pacer thread alone; volatile so that a progress line may read the counts. */
        private void count(long lateNanos) {
            sent++;
            latenessSumNanos += lateNanos;
            if (lateNanos > maxLatenessNanos) {
                maxLatenessNanos = lateNanos;
            }
        }

        /** Requests sent so far, by all runs. */
        public long sent() {
            return sent;
        }

        /** The most any send was late, seconds. */
        public double maxLatenessSeconds() {
            return maxLatenessNanos / 1e9;
        }

        /** How late sends were on average, seconds; 0 before the first. */
        public double meanLatenessSeconds() {
            long n = sent;
            return n == 0 ? 0 : latenessSumNanos / 1e9 / n;
        }
    }
}
