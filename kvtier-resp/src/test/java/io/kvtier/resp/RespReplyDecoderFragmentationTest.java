package io.kvtier.resp;

import static io.kvtier.resp.Decoding.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * The reply decoder's output does not depend on how replies were cut into reads, and a large bulk is streamed into a
 * single buffer of its size.
 */
class RespReplyDecoderFragmentationTest {
    private static final RespReplyDecoder.Limits DEFAULTS = RespReplyDecoder.Limits.defaults();

    /** Decodes {@code input} whole, then cut up every way, checks all agree, and returns the outcome. */
    private static ReplyDecoding.Outcome decodeEveryWay(byte[] input, Random random) {
        ReplyDecoding.Outcome whole = ReplyDecoding.run(ReplyDecoding.decoder(DEFAULTS), List.of(input));
        List<Function<byte[], List<byte[]>>> splitters = List.of(Decoding::byteByByte,
                Decoding::splitAfterEveryCarriageReturn,
                in -> Decoding.randomSplits(in, random, 1 + random.nextInt(40)));
        for (Function<byte[], List<byte[]>> splitter : splitters) {
            assertThat(ReplyDecoding.run(ReplyDecoding.decoder(DEFAULTS), splitter.apply(input))).isEqualTo(whole);
        }
        return whole;
    }

    @Test
    void decodesTheSameRepliesWhetherFedWholeByteByByteOrInRandomSplits() {
        String input = "+OK\r\n-ERR x\r\n:7\r\n$4\r\n\r\n\r\n\r\n$-1\r\n*-1\r\n_\r\n,2.5\r\n#t\r\n(123\r\n"
                + "=8\r\ntxt:a\r\nb\r\n!3\r\nERR\r\n|1\r\n+k\r\n+v\r\n*2\r\n%1\r\n+k\r\n~1\r\n$1\r\n\n\r\n>0\r\n";
        List<String> expected = List.of("+OK", "-ERR x", ":7", "$\r\n\r\n", "_", "_", "_", ",2.5", "#t", "(123",
                "=txt:a\r\nb", "-ERR", "*[%[+k, ~[$\n]], >[]]");

        for (long seed = 0; seed < 50; seed++) {
            assertThat(decodeEveryWay(bytes(input), new Random(seed)))
                    .isEqualTo(new ReplyDecoding.Outcome(expected, null));
        }
    }

    @Test
    void decodesRandomNestedReplyStreamsToTheGeneratedRepliesHoweverSplit() {
        for (long seed = 0; seed < 500; seed++) {
            Random random = new Random(seed);
            RandomReplies.Stream stream = RandomReplies.stream(random, 10, 4);

            ReplyDecoding.Outcome outcome = decodeEveryWay(bytes(stream.bytes()), random);

            assertThat(outcome).as("seed %d", seed).isEqualTo(new ReplyDecoding.Outcome(stream.replies(), null));
        }
    }

    @Test
    void reportsTheSameErrorHoweverTheInputIsSplit() {
        for (String input : List.of("*2\r\n+a\r\n?\r\n", "$3\r\nabcd\r\n", "+" + "x".repeat(2 << 20), ":1\r\r\n")) {
            assertThat(decodeEveryWay(bytes(input), new Random(input.hashCode())).error()).isNotNull();
        }
    }

    /**
     * Found by RespReplyDecoderFuzzTest: at the smallest line limit the error quoted 32 bytes of the line when they
     * had arrived together but only the 23 the limit needs when they trickled in, so the message depended on the reads.
     */
    @Test
    void quotesTheSamePrefixOfAnOverlongLineHoweverItArrives() {
        RespReplyDecoder.Limits limits = new RespReplyDecoder.Limits(1, 1, 1, 20);
        byte[] input = bytes("+" + "x".repeat(40) + "\r\n");

        ReplyDecoding.Outcome whole = ReplyDecoding.run(ReplyDecoding.decoder(limits), List.of(input));
        ReplyDecoding.Outcome trickled = ReplyDecoding.run(ReplyDecoding.decoder(limits), Decoding.byteByByte(input));

        assertThat(trickled).isEqualTo(whole);
        assertThat(whole.error()).isEqualTo("reply line longer than maxLineLength 20 bytes: '+" + "x".repeat(22)
                + "'...");
    }

    @Test
    void streamsAnEightMebibyteBulkArrivingInFragmentsIntoPartsAddingUpToItsSize() {
        int length = 8 << 20;
        byte[] payload = new byte[length];
        new Random(1).nextBytes(payload);
        CountingAllocator alloc = new CountingAllocator();
        RespReplyDecoder<ByteBuf> decoder = new RespReplyDecoder<>(DEFAULTS, alloc, new KeepBulk());
        Random random = new Random(2);
        ByteBuf reply = null;

        byte[] header = bytes("$" + length + "\r\n");
        assertThat(feed(decoder, header, 0, header.length)).isNull();
        for (int at = 0; at < length; ) {
            int n = Math.min(length - at, 1 + random.nextInt(64 << 10));
            assertThat(feed(decoder, payload, at, n)).isNull();
            at += n;
        }
        reply = feed(decoder, bytes("\r\n"), 0, 2);

        assertThat(alloc.allocated).as("one composite and its 1 MiB parts").hasSize(1 + 8);
        assertThat(reply).isSameAs(alloc.allocated.getFirst());
        assertThat(reply.capacity()).isEqualTo(length);
        assertThat(reply.readableBytes()).isEqualTo(length);
        assertThat(reply).isEqualTo(Unpooled.wrappedBuffer(payload));
        reply.release();
        assertThat(alloc.allReleased()).isTrue();
        decoder.close();
    }

    /** Decodes one fragment as its own buffer and checks the decoder consumed all of it. */
    private static <T> T feed(RespReplyDecoder<T> decoder, byte[] bytes, int from, int length) {
        ByteBuf fragment = Unpooled.wrappedBuffer(bytes, from, length);
        T reply = decoder.decode(fragment);
        assertThat(fragment.isReadable()).as("unconsumed fragment bytes").isFalse();
        return reply;
    }

    private static final class KeepBulk implements ReplyFactory<ByteBuf> {
        @Override
        public ByteBuf simple(String text) {
            return Unpooled.copiedBuffer(text, StandardCharsets.UTF_8);
        }

        @Override
        public ByteBuf error(String message) {
            return simple(message);
        }

        @Override
        public ByteBuf integer(long value) {
            return simple(Long.toString(value));
        }

        @Override
        public ByteBuf bulk(ByteBuf content) {
            return content;
        }

        @Override
        public ByteBuf nullValue() {
            return Unpooled.EMPTY_BUFFER;
        }

        @Override
        public ByteBuf aggregate(char type, List<ByteBuf> elements) {
            elements.forEach(ByteBuf::release);
            return Unpooled.EMPTY_BUFFER;
        }

        @Override
        public ByteBuf other(char type, String text) {
            return simple(text);
        }

        @Override
        public void release(ByteBuf value) {
            value.release();
        }
    }
}
