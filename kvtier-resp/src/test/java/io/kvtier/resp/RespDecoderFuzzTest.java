package io.kvtier.resp;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.util.List;
import java.util.Random;

/**
 * Arbitrary bytes, cut at arbitrary places, with arbitrary limits: only {@link RespException} may escape, decoding
 * always terminates, every sink ends up aborted or handed out (and then released), and the outcome equals that of
 * the whole input fed at once.
 *
 * <p>Plain {@code mvn verify} replays the corpus in
 * {@code src/test/resources/io/kvtier/resp/RespDecoderFuzzTestInputs/} (regression mode); {@code bench/fuzz.sh}
 * fuzzes it (see docs/hardening.md, "Fuzzing"). Findings are fixed with a regression test and their inputs join the
 * corpus.
 *
 * <p>Input layout: FuzzedDataProvider takes numbers from the end, so a seed is the request stream followed by an
 * 18-byte trailer read backwards: authenticated (1 byte), sink refusals (1), max bulk length (2), max multibulk
 * length (2), max inline length (2), sink threshold (2), split seed (8).
 */
class RespDecoderFuzzTest {
    @FuzzTest(maxDuration = "5m")
    void decoderNeverThrowsAnythingButRespException(FuzzedDataProvider data) {
        boolean authenticated = data.consumeBoolean();
        int refusalsPerSink = data.consumeInt(0, 3);
        RespDecoder.Limits limits = new RespDecoder.Limits(data.consumeInt(1, 1 << 16), data.consumeInt(1, 1 << 10),
                data.consumeInt(1, 1 << 10), data.consumeInt(1, 1 << 10));
        Random splits = new Random(data.consumeLong());
        byte[] input = data.consumeRemainingAsBytes();

        Decoding.Outcome whole = decode(limits, authenticated, 0, List.of(input));
        Decoding.Outcome split = decode(limits, authenticated, refusalsPerSink,
                Decoding.randomSplits(input, splits, 1 + splits.nextInt(64)));

        assertThat(split).isEqualTo(whole);
    }

    /**
     * The same, with the bounds on request memory the server sets: a request size limit (Redis's
     * client-query-buffer-limit) and a heap budget for arguments held on the heap (maxmemory-clients). Besides the
     * above, every byte charged to the budget is given back once the commands are released and the decoder closed.
     * Input layout: the first method's, then 4 more bytes, read first: max request bytes (2), heap budget (2).
     */
    @FuzzTest(maxDuration = "5m")
    void decoderWithinRequestMemoryLimitsNeverThrowsAnythingButRespException(FuzzedDataProvider data) {
        long maxRequestBytes = data.consumeLong(1, 1 << 16);
        long heapBudget = data.consumeLong(1, 1 << 16);
        boolean authenticated = data.consumeBoolean();
        int refusalsPerSink = data.consumeInt(0, 3);
        RespDecoder.Limits limits = new RespDecoder.Limits(data.consumeInt(1, 1 << 16), data.consumeInt(1, 1 << 10),
                data.consumeInt(1, 1 << 10), data.consumeInt(1, 1 << 10), maxRequestBytes);
        Random splits = new Random(data.consumeLong());
        byte[] input = data.consumeRemainingAsBytes();

        RequestBudget wholeBudget = new RequestBudget(heapBudget);
        Decoding.Outcome whole = decode(limits, authenticated, 0, List.of(input), wholeBudget);
        RequestBudget splitBudget = new RequestBudget(heapBudget);
        Decoding.Outcome split = decode(limits, authenticated, refusalsPerSink,
                Decoding.randomSplits(input, splits, 1 + splits.nextInt(64)), splitBudget);

        assertThat(split).isEqualTo(whole);
        assertThat(wholeBudget.used()).as("heap charged and not given back").isZero();
        assertThat(splitBudget.used()).as("heap charged and not given back").isZero();
    }

    private static Decoding.Outcome decode(RespDecoder.Limits limits, boolean authenticated, int refusalsPerSink,
            List<byte[]> chunks) {
        return decode(limits, authenticated, refusalsPerSink, chunks, RequestBudget.unlimited());
    }

    /** Decodes through the test harness, which turns only RespException into an outcome and checks progress. */
    private static Decoding.Outcome decode(RespDecoder.Limits limits, boolean authenticated, int refusalsPerSink,
            List<byte[]> chunks, RequestBudget budget) {
        RecordingSinkFactory sinks = new RecordingSinkFactory(refusalsPerSink);
        RespDecoder decoder = new RespDecoder(limits, sinks, budget.open(() -> { }));
        decoder.setAuthenticated(authenticated);
        Decoding.Outcome outcome = Decoding.run(decoder, chunks);
        assertThat(sinks.allAborted()).as("every sink was released by its command or aborted by the decoder").isTrue();
        return outcome;
    }
}
