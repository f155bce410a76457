package io.kvtier.bench.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MooncakeTraceTest {
    private static final long MS = 1_000_000;
    /** The first lines of Mooncake's mooncake_trace.jsonl (the third cut short). */
    private static final String HEAD = """
            {"timestamp": 0, "input_length": 6755, "output_length": 500, "hash_ids": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]}
            {"timestamp": 0, "input_length": 7319, "output_length": 490, "hash_ids": [0, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27]}

            {"timestamp": 3052, "input_length": 1000, "output_length": 794, "hash_ids": [0, 28]}
            """;

    @TempDir
    Path dir;

    private static MooncakeTrace parse(String text) throws IOException {
        return MooncakeTrace.parse(new StringReader(text), "t.jsonl");
    }

    @Test
    void readsMooncakesFormat() throws IOException {
        Path file = dir.resolve("mooncake_trace.jsonl");
        Files.writeString(file, HEAD);
        MooncakeTrace trace = MooncakeTrace.load(file);

        assertThat(trace.size()).isEqualTo(3);
        assertThat(trace.line(1).inputLength()).isEqualTo(7319);
        assertThat(trace.line(1).outputLength()).isEqualTo(490);
        assertThat(trace.line(1).hashIds()).startsWith(0, 14, 15).hasSize(15);
        assertThat(trace.line(2).line()).isEqualTo(4); // the blank line counts
        assertThat(trace.spanNanos()).isEqualTo(3052 * MS);
        assertThat(trace.request(2, 1).maxTokens()).isEqualTo(794);
        assertThat(trace.request(2, 1).round()).isEqualTo(2);
    }

    @Test
    void equalHashIdsGiveEqualTokensAndOthersDoNot() throws IOException {
        MooncakeTrace trace = parse(HEAD);
        int[] a = trace.prompt(0, 1);
        int[] b = trace.prompt(1, 1);
        int[] c = trace.prompt(2, 1);

        assertThat(a).hasSize(6755);
        assertThat(Arrays.copyOf(a, 512)).isEqualTo(Arrays.copyOf(b, 512)).isEqualTo(Arrays.copyOf(c, 512));
        assertThat(Arrays.copyOfRange(a, 512, 1024)).isNotEqualTo(Arrays.copyOfRange(b, 512, 1024));
        assertThat(Arrays.stream(a).allMatch(t -> t >= 1000 && t < 30_000)).isTrue();
        assertThat(trace.prompt(0, 1)).isEqualTo(a);
        assertThat(Arrays.copyOf(trace.prompt(0, 2), 512)).isNotEqualTo(Arrays.copyOf(a, 512)); // the seed names them
    }

    @Test
    void aPromptLongerThanItsBlocksIsFilledWithTokensOfItsOwn() throws IOException {
        MooncakeTrace trace = parse("""
                {"timestamp": 0, "input_length": 600, "output_length": 1, "hash_ids": [5]}
                {"timestamp": 5, "input_length": 600, "output_length": 1, "hash_ids": [5]}
                {"timestamp": 9, "input_length": 300, "output_length": 0, "hash_ids": [5, 6]}
                """);
        int[] first = trace.prompt(0, 1);
        int[] second = trace.prompt(1, 1);

        assertThat(Arrays.copyOf(first, 512)).isEqualTo(Arrays.copyOf(second, 512));
        assertThat(Arrays.copyOfRange(first, 512, 600)).isNotEqualTo(Arrays.copyOfRange(second, 512, 600));
        assertThat(trace.prompt(2, 1)).isEqualTo(Arrays.copyOf(first, 300)); // cut to input_length
        assertThat(trace.line(2).outputLength()).isEqualTo(1); // vLLM's least max_tokens
    }

    @Test
    void linesOutOfOrderAreSortedByTime() throws IOException {
        MooncakeTrace trace = parse("""
                {"timestamp": 20, "input_length": 1, "output_length": 1, "hash_ids": [2]}
                {"timestamp": 10, "input_length": 1, "output_length": 1, "hash_ids": [1]}
                {"timestamp": 20, "input_length": 1, "output_length": 1, "hash_ids": [3]}
                """);
        assertThat(trace.line(0).line()).isEqualTo(2);
        assertThat(trace.line(1).line()).isEqualTo(1);
        assertThat(trace.line(2).line()).isEqualTo(3);
    }

    @Test
    void badLinesAreRefusedWithTheirLineNumber() {
        String good = "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [1]}\n";
        assertThatThrownBy(() -> parse(good + "{\"timestamp\": 1, \"output_length\": 1, \"hash_ids\": [1]}"))
                .hasMessageStartingWith("t.jsonl line 2: \"input_length\" is missing");
        assertThatThrownBy(() -> parse(good + "\n[1, 2]"))
                .hasMessageStartingWith("t.jsonl line 3: expected a JSON object like");
        assertThatThrownBy(() -> parse(good + "{\"timestamp\": 1, \"input_length\": 10, \"output_length\""))
                .hasMessageStartingWith("t.jsonl line 2: bad JSON");
        assertThatThrownBy(() -> parse("{\"timestamp\": -1, \"input_length\": 10, \"output_length\": 1, "
                + "\"hash_ids\": [1]}")).hasMessage("t.jsonl line 1: \"timestamp\" -1 must be >= 0 (milliseconds)");
        assertThatThrownBy(() -> parse("{\"timestamp\": 0, \"input_length\": 1.5, \"output_length\": 1, "
                + "\"hash_ids\": [1]}")).hasMessageContaining("line 1: \"input_length\" 1.5 must be a whole number");
        assertThatThrownBy(() -> parse("{\"timestamp\": 0, \"input_length\": 0, \"output_length\": 1, "
                + "\"hash_ids\": [1]}")).hasMessageContaining("line 1: \"input_length\" 0 must be");
        assertThatThrownBy(() -> parse("{\"timestamp\": 0, \"input_length\": 3, \"output_length\": 1, "
                + "\"hash_ids\": [1, -2]}")).hasMessage("t.jsonl line 1: \"hash_ids\"[1] must be a whole number >= 0,"
                + " not -2");
        assertThatThrownBy(() -> parse("{\"timestamp\": 0, \"input_length\": 3, \"output_length\": 1}"))
                .hasMessageContaining("line 1: \"hash_ids\" must be a list");
        assertThatThrownBy(() -> parse("\n\n")).hasMessage("t.jsonl: the trace has no requests");
    }

    @Test
    void theRateIsTheLinesOverTheSpanSpedUp() throws IOException {
        MooncakeTrace trace = parse(HEAD);
        MooncakeTrace.Replay replay = trace.replay(2, false, 1);
        assertThat(replay.requestsPerSecond()).isCloseTo(3 / (3.052 / 2), org.assertj.core.data.Offset.offset(1e-9));
        assertThat(replay.rateLabel()).isEqualTo("trace x2");
        assertThatThrownBy(() -> parse("{\"timestamp\": 0, \"input_length\": 3, \"output_length\": 1, "
                + "\"hash_ids\": [1]}").replay(1, true)).hasMessageContaining("no rate");
        assertThatThrownBy(() -> trace.replay(0, true)).hasMessageContaining("speedup 0.0");
    }

    /** A clock that moves only when the pacer sleeps (to the deadline) or the sender is slow (by its delay). */
    private static final class FakeClock implements Sleeper {
        long now = 1_000 * MS;
        final List<Long> sleeps = new ArrayList<>();

        @Override
        public void sleepUntil(long deadlineNanos) {
            sleeps.add(deadlineNanos);
            now = Math.max(now, deadlineNanos);
        }
    }

    private static RequestSender recording(FakeClock clock, List<Long> times, long delay) {
        return request -> {
            times.add(clock.now);
            clock.now += delay;
            return CompletableFuture.completedFuture(new RequestResult(request, clock.now, clock.now, clock.now, 1, 1,
                    0, null));
        };
    }

    private static final String THREE = """
            {"timestamp": 0, "input_length": 5, "output_length": 1, "hash_ids": [1]}
            {"timestamp": 100, "input_length": 5, "output_length": 1, "hash_ids": [2]}
            {"timestamp": 400, "input_length": 5, "output_length": 1, "hash_ids": [3]}
            """;

    @Test
    void sendsEachLineExactlyAtItsTimestampOverTheSpeedup() throws Exception {
        FakeClock clock = new FakeClock();
        MooncakeTrace.Replay replay = new MooncakeTrace.Replay(parse(THREE), 2, false, 1, () -> clock.now, clock);
        List<Long> times = new ArrayList<>();
        List<RequestResult> results = new ArrayList<>();

        replay.run(recording(clock, times, 0), clock.now + 10_000 * MS, results::add);

        long start = 1_000 * MS;
        assertThat(times).containsExactly(start, start + 50 * MS, start + 200 * MS);
        assertThat(results).hasSize(3);
        assertThat(replay.maxLatenessSeconds()).isZero();
        assertThat(replay.sent()).isEqualTo(3);
    }

    @Test
    void loopsOffsetByTheSpanUntilTheEnd() throws Exception {
        FakeClock clock = new FakeClock();
        MooncakeTrace.Replay replay = new MooncakeTrace.Replay(parse(THREE), 1, true, 1, () -> clock.now, clock);
        List<Long> times = new ArrayList<>();

        replay.run(recording(clock, times, 0), clock.now + 900 * MS, r -> { });

        long start = 1_000 * MS;
        assertThat(times).containsExactly(start, start + 100 * MS, start + 400 * MS, // pass 0
                start + 400 * MS, start + 500 * MS, start + 800 * MS, // pass 1, 400 ms later
                start + 800 * MS); // pass 2; its second, at 900 ms, is at the end: not sent
        assertThat(clock.now).isEqualTo(start + 800 * MS);
    }

    @Test
    void aSlowSenderMakesLaterSendsLateButNeverEarly() throws Exception {
        FakeClock clock = new FakeClock();
        MooncakeTrace.Replay replay = new MooncakeTrace.Replay(parse(THREE), 1, false, 1, () -> clock.now, clock);
        List<Long> times = new ArrayList<>();

        replay.run(recording(clock, times, 150 * MS), clock.now + 10_000 * MS, r -> { });

        long start = 1_000 * MS;
        assertThat(times).containsExactly(start, start + 150 * MS, start + 400 * MS); // 2nd 50 ms late, 3rd on time
        assertThat(replay.maxLatenessSeconds()).isEqualTo(0.05);
        assertThat(replay.meanLatenessSeconds()).isCloseTo(0.05 / 3, org.assertj.core.data.Offset.offset(1e-12));
    }

    @Test
    void onTheRealClockEverySendIsOnTimeWithinAFewMilliseconds() throws Exception {
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < 20; i++) {
            lines.append("{\"timestamp\": ").append(i * 50).append(", \"input_length\": 600, \"output_length\": 1, "
                    + "\"hash_ids\": [").append(i).append(", 99]}\n");
        }
        MooncakeTrace trace = parse(lines.toString());
        MooncakeTrace.Replay replay = trace.replay(2, false, 1);
        List<Long> sent = new CopyOnWriteArrayList<>();
        long before = System.nanoTime();

        replay.run(request -> {
            sent.add(System.nanoTime());
            return CompletableFuture.completedFuture(null);
        }, before + TimeUnit.SECONDS.toNanos(3), r -> { });

        assertThat(sent).hasSize(20);
        for (int i = 0; i < 20; i++) {
            long due = before + i * 25 * MS;
            assertThat(sent.get(i)).as("request %d", i).isGreaterThanOrEqualTo(due).isLessThan(due + 200 * MS);
        }
        assertThat(replay.maxLatenessSeconds()).isLessThan(0.2);
        assertThat(System.nanoTime() - before).isLessThan(TimeUnit.SECONDS.toNanos(3));
    }
}
