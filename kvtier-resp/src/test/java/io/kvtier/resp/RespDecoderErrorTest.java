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

/** Every protocol error, with Redis 7.0's exact text, and what the decoder does after one. */
class RespDecoderErrorTest {
    private static final RespDecoder.Limits LIMITS = RespDecoder.Limits.defaults(512L << 20);
    private static final String BIG = "1".repeat(64 * 1024);

    private static String errorOf(String input) {
        return errorOf(input, true);
    }

    private static String errorOf(String input, boolean authenticated) {
        RespDecoder decoder = new RespDecoder(LIMITS, new RecordingSinkFactory());
        decoder.setAuthenticated(authenticated);
        return Decoding.run(decoder, bytes(input)).error();
    }

    @Test
    void rejectsAMultibulkCountLineWithoutCarriageReturnInTheFirst64KiB() {
        assertThat(errorOf("*" + BIG)).isEqualTo("ERR Protocol error: too big mbulk count string");
        assertThat(errorOf("*" + BIG.substring(1))).isNull();
    }

    @ParameterizedTest
    @ValueSource(strings = {"*\r\n", "*x\r\n", "*+1\r\n", "*01\r\n", "*-0\r\n", "*1 \r\n", "* 1\r\n", "*1048577\r\n",
            "*9223372036854775808\r\n", "*-9223372036854775809\r\n", "*000000000000000000001\r\n"})
    void rejectsAnInvalidMultibulkLength(String input) {
        assertThat(errorOf(input)).isEqualTo("ERR Protocol error: invalid multibulk length");
    }

    @Test
    void limitsUnauthenticatedConnectionsToTenArguments() {
        assertThat(errorOf("*11\r\n", false)).isEqualTo("ERR Protocol error: unauthenticated multibulk length");
        assertThat(errorOf("*10\r\n", false)).isNull();
        assertThat(errorOf("*11\r\n", true)).isNull();
    }

    @Test
    void namesTheByteFoundWhereDollarWasExpected() {
        assertThat(errorOf("*1\r\n:1\r\n")).isEqualTo("ERR Protocol error: expected '$', got ':'");
        assertThat(errorOf("*1\r\n\r\n")).isEqualTo("ERR Protocol error: expected '$', got ' '");
        assertThat(errorOf("*2\r\n$1\r\na\r\n\u00e9\r\n")).isEqualTo("ERR Protocol error: expected '$', got '\u00e9'");
    }

    @Test
    void waitsForTheLineEndBeforeCheckingForDollarLikeRedis() {
        assertThat(errorOf("*1\r\nX")).isNull();
    }

    @Test
    void rejectsABulkLengthLineWithoutCarriageReturnInTheFirst64KiB() {
        assertThat(errorOf("*1\r\n$" + BIG)).isEqualTo("ERR Protocol error: too big bulk count string");
        assertThat(errorOf("*1\r\nX" + BIG)).isEqualTo("ERR Protocol error: too big bulk count string");
    }

    @ParameterizedTest
    @ValueSource(strings = {"$\r\n", "$-1\r\n", "$-0\r\n", "$x\r\n", "$1x\r\n", "$536870913\r\n",
            "$99999999999999999999\r\n"})
    void rejectsAnInvalidBulkLength(String line) {
        assertThat(errorOf("*1\r\n" + line)).isEqualTo("ERR Protocol error: invalid bulk length");
    }

    @Test
    void acceptsABulkOfExactlyTheMaximumLength() {
        assertThat(errorOf("*1\r\n$536870912\r\n")).isNull();
    }

    @Test
    void limitsUnauthenticatedBulksTo16KiB() {
        assertThat(errorOf("*1\r\n$16385\r\n", false)).isEqualTo("ERR Protocol error: unauthenticated bulk length");
        assertThat(errorOf("*1\r\n$16384\r\n", false)).isNull();
    }

    @Test
    void liftsTheUnauthenticatedLimitsOnceAuthenticated() {
        RespDecoder decoder = new RespDecoder(LIMITS, new RecordingSinkFactory());
        decoder.setAuthenticated(false);
        decoder.setAuthenticated(true);

        assertThat(Decoding.run(decoder, bytes("*11\r\n")).error()).isNull();
    }

    @Test
    void rejectsAnInlineLineWithoutNewlineInTheFirst64KiB() {
        assertThat(errorOf("GET " + BIG)).isEqualTo("ERR Protocol error: too big inline request");
        assertThat(errorOf("GET " + BIG.substring(5) + "\r\n")).isNull();
        assertThat(errorOf("GET " + BIG.substring(4) + "\r\n")).isEqualTo("ERR Protocol error: too big inline request");
    }

    @Test
    void rejectsALineWithANulBeforeItsEndOnlyOnceItPasses64KiBLikeRedis() {
        assertThat(errorOf("GET a\u0000\r\n" + BIG)).isEqualTo("ERR Protocol error: too big inline request");
        assertThat(errorOf("*1\u0000\r\n" + BIG)).isEqualTo("ERR Protocol error: too big mbulk count string");
        assertThat(errorOf("*1\r\n$\u0000\r\n" + BIG)).isEqualTo("ERR Protocol error: too big bulk count string");
        assertThat(errorOf("GET a\u0000\r\n" + BIG.substring(8))).isNull();
    }

    @ParameterizedTest
    @ValueSource(strings = {"GET \"k\n", "GET 'k\n", "GET \"k\"x\n", "GET 'k'x\n", "GET \"k\\\"\n", "GET \"k\\\n"})
    void rejectsUnbalancedQuotes(String input) {
        assertThat(errorOf(input)).isEqualTo("ERR Protocol error: unbalanced quotes in request");
    }

    @Test
    void decodesTheCommandsBeforeAnError() {
        RespDecoder decoder = new RespDecoder(LIMITS, new RecordingSinkFactory());

        Decoding.Outcome outcome = Decoding.run(decoder, bytes("PING\r\n*1\r\n$1\r\nx\r\n*x\r\nPING\r\n"));

        assertThat(outcome.commands()).containsExactly(List.of("PING"), List.of("x"));
        assertThat(outcome.error()).isEqualTo("ERR Protocol error: invalid multibulk length");
    }

    @Test
    void keepsFailingWithTheSameErrorAfterAnError() {
        RespDecoder decoder = new RespDecoder(LIMITS, new RecordingSinkFactory());
        ByteBuf buf = Unpooled.wrappedBuffer(bytes("*x\r\n"));

        assertThatThrownBy(() -> decoder.decode(buf)).isInstanceOf(RespException.class);
        assertThatThrownBy(() -> decoder.decode(Unpooled.wrappedBuffer(bytes("PING\r\n"))))
                .isInstanceOf(RespException.class)
                .hasMessage("ERR Protocol error: invalid multibulk length");
    }

    @Test
    void abortsTheSinksOfTheCommandInProgressOnAnError() {
        RecordingSinkFactory sinks = new RecordingSinkFactory();
        RespDecoder decoder = new RespDecoder(new RespDecoder.Limits(1 << 20, 10, 1024, 4), sinks);
        ByteBuf buf = Unpooled.wrappedBuffer(bytes("*3\r\n$4\r\nfull\r\n$6\r\npart"));
        assertThat(decoder.decode(buf)).isNull();

        assertThatThrownBy(() -> decoder.decode(Unpooled.wrappedBuffer(bytes("ia\r\n$x\r\n"))))
                .hasMessage("ERR Protocol error: invalid bulk length");
        assertThat(sinks.opened).hasSize(2).allMatch(HeapBulkSink::isAborted);
    }

    @Test
    void propagatesARefusalFromTheSinkFactoryAndAbortsEarlierSinks() {
        HeapBulkSink first = new HeapBulkSink(0, 4);
        BulkSinkFactory sinks = (argIndex, length) -> {
            if (argIndex == 0) {
                return first;
            }
            throw new RespException("ERR payload too large for this server");
        };
        RespDecoder decoder = new RespDecoder(new RespDecoder.Limits(1 << 20, 10, 1024, 4), sinks);

        Decoding.Outcome outcome = Decoding.run(decoder, bytes("*2\r\n$4\r\nabcd\r\n$9\r\n"));

        assertThat(outcome.error()).isEqualTo("ERR payload too large for this server");
        assertThat(first.isAborted()).isTrue();
    }

    @Test
    void validatesItsLimitsNamingTheValueAndTheRange() {
        assertThatThrownBy(() -> new RespDecoder.Limits(0, 1, 1, 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("maxBulkLength 0 is outside [1, 9223372036854775807]");
        assertThatThrownBy(() -> new RespDecoder.Limits(1, 1, 1, -5))
                .hasMessage("sinkThreshold -5 is outside [1, 2147483639]");
        assertThat(RespDecoder.Limits.defaults(7))
                .isEqualTo(new RespDecoder.Limits(7, 1024 * 1024, 64 * 1024, 16 * 1024));
    }
}
