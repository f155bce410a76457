package io.kvtier.resp;

import static io.kvtier.resp.Decoding.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Every reply type, the limits, malformed replies, and who releases what. */
class RespReplyDecoderTest {
    private static final RespReplyDecoder.Limits DEFAULTS = RespReplyDecoder.Limits.defaults();
    private static final RespReplyDecoder.Limits SMALL = new RespReplyDecoder.Limits(16, 10, 2, 20);

    private static ReplyDecoding.Outcome decode(RespReplyDecoder.Limits limits, String input) {
        return ReplyDecoding.run(ReplyDecoding.decoder(limits), List.of(bytes(input)));
    }

    @Test
    void decodesEveryResp2Type() {
        String input = "+OK\r\n-ERR bad thing\r\n:-42\r\n:0\r\n$5\r\na\r\nbc\r\n$0\r\n\r\n$-1\r\n*-1\r\n*0\r\n"
                + "*3\r\n:1\r\n*2\r\n+a\r\n$1\r\nb\r\n$-1\r\n";

        assertThat(decode(DEFAULTS, input)).isEqualTo(new ReplyDecoding.Outcome(List.of("+OK", "-ERR bad thing",
                ":-42", ":0", "$a\r\nbc", "$", "_", "_", "*[]", "*[:1, *[+a, $b], _]"), null));
    }

    @Test
    void decodesEveryResp3Type() {
        String input = "_\r\n,1.5\r\n,-inf\r\n#t\r\n#f\r\n(3492890328409238509324850943850943825024385\r\n"
                + "=15\r\ntxt:Some string\r\n!8\r\nERR oops\r\n%0\r\n~2\r\n+a\r\n:2\r\n>2\r\n+message\r\n$2\r\nhi\r\n"
                + "%2\r\n+server\r\n$5\r\nredis\r\n+modules\r\n*1\r\n%1\r\n+name\r\n_\r\n";

        assertThat(decode(DEFAULTS, input).replies()).containsExactly("_", ",1.5", ",-inf", "#t", "#f",
                "(3492890328409238509324850943850943825024385", "=txt:Some string", "-ERR oops", "%[]",
                "~[+a, :2]", ">[+message, $hi]", "%[+server, $redis, +modules, *[%[+name, _]]]");
    }

    @Test
    void skipsAttributesBeforeAReplyAndInsideAggregates() {
        String input = "|1\r\n+ttl\r\n:3600\r\n+after\r\n*2\r\n|1\r\n+a\r\n*1\r\n+x\r\n:1\r\n:2\r\n|0\r\n:3\r\n";

        assertThat(decode(DEFAULTS, input).replies()).containsExactly("+after", "*[:1, :2]", ":3");
    }

    @Test
    void returnsOneReplyPerCallAndLeavesTheNextOneUnread() {
        ByteBuf in = Unpooled.copiedBuffer(bytes("+a\r\n:1\r\n$1\r\n"));
        RespReplyDecoder<String> decoder = ReplyDecoding.decoder(DEFAULTS);

        assertThat(decoder.decode(in)).isEqualTo("+a");
        assertThat(in.readerIndex()).isEqualTo(4);
        assertThat(decoder.decode(in)).isEqualTo(":1");
        assertThat(decoder.decode(in)).isNull();
        assertThat(in.isReadable()).isFalse();
        in.release();
        decoder.close();
    }

    @Test
    void acceptsRepliesAtEveryLimit() {
        String input = "$16\r\n0123456789abcdef\r\n*10\r\n" + ":1\r\n".repeat(10) + "%5\r\n" + ":1\r\n".repeat(10)
                + "*1\r\n*1\r\n*0\r\n+" + "x".repeat(20) + "\r\n";

        assertThat(decode(SMALL, input).error()).isNull();
    }

    @Test
    void refusesAggregatesLongerThanTheLimit() {
        assertThat(decode(SMALL, "*11\r\n").error()).isEqualTo(
                "'*' aggregate of 11 is outside [0, maxAggregateLength 10 elements]");
        assertThat(decode(SMALL, "%6\r\n").error()).isEqualTo(
                "'%' aggregate of 6 pairs is outside [0, maxAggregateLength 10 elements]");
        assertThat(decode(SMALL, "%4611686018427387904\r\n").error()).contains("maxAggregateLength 10");
    }

    @Test
    void refusesAggregatesNestedDeeperThanTheLimit() {
        assertThat(decode(SMALL, "*1\r\n~1\r\n>1\r\n:1\r\n").error()).isEqualTo(
                "'>' aggregate nested deeper than maxDepth 2");
    }

    @Test
    void refusesBulksAndLinesLongerThanTheLimit() {
        assertThat(decode(SMALL, "$17\r\n").error()).isEqualTo("'$' length 17 is outside [0, maxBulkLength 16]");
        assertThat(decode(SMALL, "+" + "x".repeat(21) + "\r\n").error())
                .startsWith("reply line longer than maxLineLength 20");
    }

    @Test
    void refusesAnOverlongLineBeforeItsEndArrives() {
        RespReplyDecoder<String> decoder = ReplyDecoding.decoder(SMALL);
        ByteBuf in = Unpooled.copiedBuffer(bytes("+" + "x".repeat(23)));

        assertThatThrownBy(() -> decoder.decode(in)).isInstanceOf(RespReplyException.class)
                .hasMessageContaining("maxLineLength 20");
        in.release();
    }

    @ParameterizedTest
    @ValueSource(strings = {"?x\r\n", "+OK\n", "\r\n", "\n", "$3\r\nabcXY", ":12a\r\n", ":\r\n", "_x\r\n", "$-2\r\n",
        "%-1\r\n", "~-1\r\n", "*-2\r\n", "=-1\r\n", ":99999999999999999999\r\n"})
    void refusesMalformedReplies(String input) {
        assertThat(decode(DEFAULTS, input).error()).isNotNull();
    }

    @Test
    void staysFailedAfterAnError() {
        RespReplyDecoder<String> decoder = ReplyDecoding.decoder(DEFAULTS);
        ByteBuf in = Unpooled.copiedBuffer(bytes("?\r\n+OK\r\n"));

        assertThatThrownBy(() -> decoder.decode(in)).isInstanceOf(RespReplyException.class);
        assertThatThrownBy(() -> decoder.decode(in)).isInstanceOf(RespReplyException.class)
                .hasMessage("unknown reply type '?\\r\\n'");
        decoder.close();
        assertThatThrownBy(() -> decoder.decode(in)).isInstanceOf(RespReplyException.class);
        in.release();
    }

    @Test
    void refusesLimitsTooSmallForANumber() {
        assertThatThrownBy(() -> new RespReplyDecoder.Limits(1, 1, 1, 19)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("maxLineLength 19 is below the minimum 20");
    }

    @Test
    void refusesToDecodeAfterClose() {
        RespReplyDecoder<String> decoder = ReplyDecoding.decoder(DEFAULTS);
        decoder.close();

        assertThatThrownBy(() -> decoder.decode(Unpooled.EMPTY_BUFFER)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void assemblesLongBulksFromPartsAndReleasesThemAllWithTheReply() {
        CountingAllocator alloc = new CountingAllocator();
        RespReplyDecoder<Object> decoder = new RespReplyDecoder<>(DEFAULTS, alloc, new HeldReplies());
        int length = 2 * RespReplyDecoder.BULK_PART + 12345;
        byte[] payload = new byte[length];
        new java.util.Random(5).nextBytes(payload);
        ByteBuf in = Unpooled.buffer();
        in.writeBytes(bytes("$" + length + "\r\n"));

        Object reply = null;
        for (int at = 0; at <= length; at += 100_000) {
            assertThat(reply).isNull();
            in.writeBytes(payload, at, Math.min(100_000, length - at));
            if (at + 100_000 > length) {
                in.writeBytes(bytes("\r\n"));
            }
            reply = decoder.decode(in);
            in.discardReadBytes();
        }

        ByteBuf bulk = (ByteBuf) reply;
        assertThat(bulk.readableBytes()).isEqualTo(length);
        assertThat(io.netty.buffer.ByteBufUtil.getBytes(bulk)).isEqualTo(payload);
        assertThat(alloc.allocated).hasSize(4); // the composite and its three parts
        bulk.release();
        assertThat(alloc.allReleased()).isTrue();
        in.release();
        decoder.close();
    }

    @Test
    void releasesTheBulksOfAHalfDecodedReplyOnClose() {
        CountingAllocator alloc = new CountingAllocator();
        RespReplyDecoder<Object> decoder = new RespReplyDecoder<>(DEFAULTS, alloc, new HeldReplies());
        ByteBuf in = Unpooled.copiedBuffer(bytes("*3\r\n$3\r\nabc\r\n*2\r\n$2\r\nxy\r\n$5\r\nab"));

        assertThat(decoder.decode(in)).isNull();
        decoder.close();

        assertThat(alloc.allocated).hasSize(3);
        assertThat(alloc.allReleased()).isTrue();
        in.release();
    }

    @Test
    void releasesTheBulksOfAHalfDecodedReplyOnError() {
        CountingAllocator alloc = new CountingAllocator();
        RespReplyDecoder<Object> decoder = new RespReplyDecoder<>(DEFAULTS, alloc, new HeldReplies());
        ByteBuf in = Unpooled.copiedBuffer(bytes("*3\r\n$3\r\nabc\r\n*2\r\n$2\r\nxy\r\n$2\r\nabXY"));

        assertThatThrownBy(() -> decoder.decode(in)).isInstanceOf(RespReplyException.class)
                .hasMessage("'$' payload of 2 bytes is followed by 'XY' instead of CRLF");

        assertThat(alloc.allocated).hasSize(3);
        assertThat(alloc.allReleased()).isTrue();
        in.release();
    }

    @Test
    void releasesTheBulksOfSkippedAttributesAndHandsOutTheRest() {
        CountingAllocator alloc = new CountingAllocator();
        RespReplyDecoder<Object> decoder = new RespReplyDecoder<>(DEFAULTS, alloc, new HeldReplies());
        ByteBuf in = Unpooled.copiedBuffer(bytes("|1\r\n$1\r\nk\r\n$1\r\nv\r\n$3\r\nval\r\n"));

        Object reply = decoder.decode(in);

        assertThat(reply).isInstanceOf(ByteBuf.class);
        assertThat(alloc.allocated).hasSize(3);
        assertThat(alloc.allocated.stream().filter(buf -> buf.refCnt() > 0)).containsExactly((ByteBuf) reply);
        ((ByteBuf) reply).release();
        in.release();
        decoder.close();
    }

    /** Keeps bulks as the decoder's buffers and aggregates as lists, so releases can be checked. */
    private static final class HeldReplies implements ReplyFactory<Object> {
        @Override
        public Object simple(String text) {
            return text;
        }

        @Override
        public Object error(String message) {
            return message;
        }

        @Override
        public Object integer(long value) {
            return value;
        }

        @Override
        public Object bulk(ByteBuf content) {
            return content;
        }

        @Override
        public Object nullValue() {
            return "null";
        }

        @Override
        public Object aggregate(char type, List<Object> elements) {
            return elements;
        }

        @Override
        public Object other(char type, String text) {
            return text;
        }

        @Override
        public void release(Object value) {
            if (value instanceof ByteBuf buf) {
                buf.release();
            } else if (value instanceof List<?> list) {
                list.forEach(this::release);
            }
        }
    }
}
