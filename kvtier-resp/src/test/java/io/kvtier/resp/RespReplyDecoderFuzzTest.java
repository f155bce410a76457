package io.kvtier.resp;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.util.List;
import java.util.Random;

/**
 * Arbitrary bytes as server replies, cut at arbitrary places, with arbitrary limits: only {@link RespReplyException}
 * may escape, decoding always terminates, every buffer the decoder allocated is released by the end (handed-out bulks
 * by the test's factory, the rest by the decoder on failure or close), and the outcome equals that of the whole input
 * fed at once.
 *
 * <p>Plain {@code mvn verify} replays the corpus in
 * {@code src/test/resources/io/kvtier/resp/RespReplyDecoderFuzzTestInputs/}; {@code bench/fuzz.sh} fuzzes it (see
 * docs/hardening.md, "Fuzzing").
 *
 * <p>Input layout: FuzzedDataProvider takes numbers from the end, so an input is the reply stream followed by a
 * 16-byte trailer read backwards: max bulk length (2 bytes), max aggregate length (2), max depth (1), max line length
 * (2), split seed (8), and one byte that picks the chunk size.
 */
class RespReplyDecoderFuzzTest {
    @FuzzTest(maxDuration = "5m")
    void replyDecoderNeverThrowsAnythingButRespReplyException(FuzzedDataProvider data) {
        RespReplyDecoder.Limits limits = new RespReplyDecoder.Limits(data.consumeInt(1, 1 << 16),
                data.consumeInt(1, 1 << 10), data.consumeInt(1, 64), data.consumeInt(20, 1 << 10));
        Random splits = new Random(data.consumeLong());
        int maxChunk = data.consumeInt(1, 64);
        byte[] input = data.consumeRemainingAsBytes();

        ReplyDecoding.Outcome whole = decode(limits, List.of(input));
        ReplyDecoding.Outcome split = decode(limits, Decoding.randomSplits(input, splits, maxChunk));

        assertThat(split).isEqualTo(whole);
    }

    private static ReplyDecoding.Outcome decode(RespReplyDecoder.Limits limits, List<byte[]> chunks) {
        CountingAllocator alloc = new CountingAllocator();
        ReplyDecoding.Outcome outcome = ReplyDecoding.run(new RespReplyDecoder<>(limits, alloc,
                new RenderedReplies()), chunks);
        assertThat(alloc.allReleased()).as("every buffer the decoder allocated was released").isTrue();
        return outcome;
    }
}
