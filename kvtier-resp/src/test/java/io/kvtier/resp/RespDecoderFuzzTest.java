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

    /** Decodes through the test harness, which turns only RespException into an outcome and checks progress. */
    private static Decoding.Outcome decode(RespDecoder.Limits limits, boolean authenticated, int refusalsPerSink,
            List<byte[]> chunks) {
        RecordingSinkFactory sinks = new RecordingSinkFactory(refusalsPerSink);
        RespDecoder decoder = new RespDecoder(limits, sinks);
        decoder.setAuthenticated(authenticated);
        Decoding.Outcome outcome = Decoding.run(decoder, chunks);
        assertThat(sinks.allAborted()).as("every sink was released by its command or aborted by the decoder").isTrue();
        return outcome;
    }
}
