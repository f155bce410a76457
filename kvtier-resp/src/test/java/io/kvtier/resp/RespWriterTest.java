package io.kvtier.resp;

import static io.kvtier.resp.RespWriter.RESP2;
import static io.kvtier.resp.RespWriter.RESP3;
import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Exact reply bytes, RESP2 and RESP3, as Redis 7.0 writes them. */
class RespWriterTest {
    /** What {@code write} puts into an empty buffer, as ISO-8859-1 text. */
    private static String written(Consumer<ByteBuf> write) {
        ByteBuf buf = Unpooled.buffer(1);
        try {
            write.accept(buf);
            return buf.toString(ISO_8859_1);
        } finally {
            buf.release();
        }
    }

    @Test
    void writesSimpleStringsAndErrorsOnOneLine() {
        assertThat(written(b -> RespWriter.simpleString(b, "OK"))).isEqualTo("+OK\r\n");
        assertThat(written(RespWriter::ok)).isEqualTo("+OK\r\n");
        assertThat(written(b -> RespWriter.error(b, "ERR x"))).isEqualTo("-ERR x\r\n");
        assertThat(written(b -> RespWriter.error(b, "ERR a\r\nb"))).isEqualTo("-ERR a  b\r\n");
        assertThat(written(b -> RespWriter.simpleString(b, "é"))).isEqualTo("+\u00c3\u00a9\r\n");
    }

    @Test
    void writesErrorsOneBytePerCharSoThatEchoedClientBytesComeBackUnchanged() {
        String clientByte = new String(new byte[] {(byte) 0xe9}, ISO_8859_1);

        assertThat(written(b -> RespWriter.error(b, "ERR Protocol error: expected '$', got '" + clientByte + "'")))
                .isEqualTo("-ERR Protocol error: expected '$', got '\u00e9'\r\n");
    }

    @ParameterizedTest
    @CsvSource({"0, :0", "1, :1", "-1, :-1", "10, :10", "1234567890, :1234567890",
            "9223372036854775807, :9223372036854775807", "-9223372036854775808, :-9223372036854775808"})
    void writesIntegersInDecimal(long value, String expected) {
        assertThat(written(b -> RespWriter.integer(b, value))).isEqualTo(expected + "\r\n");
    }

    @Test
    void writesBulkStringsWithTheirByteLength() {
        assertThat(written(b -> RespWriter.bulk(b, new byte[] {'a', '\r', '\n'}))).isEqualTo("$3\r\na\r\n\r\n");
        assertThat(written(b -> RespWriter.bulk(b, new byte[0]))).isEqualTo("$0\r\n\r\n");
        assertThat(written(b -> RespWriter.bulk(b, "é"))).isEqualTo("$2\r\n\u00c3\u00a9\r\n");
        assertThat(written(b -> {
            RespWriter.bulkHeader(b, 5_000_000_000L);
            RespWriter.crlf(b);
        })).isEqualTo("$5000000000\r\n\r\n");
    }

    @Test
    void writesNullsPerProtocol() {
        assertThat(written(b -> RespWriter.nullBulk(b, RESP2))).isEqualTo("$-1\r\n");
        assertThat(written(b -> RespWriter.nullBulk(b, RESP3))).isEqualTo("_\r\n");
        assertThat(written(b -> RespWriter.nullArray(b, RESP2))).isEqualTo("*-1\r\n");
        assertThat(written(b -> RespWriter.nullArray(b, RESP3))).isEqualTo("_\r\n");
    }

    @Test
    void writesAggregateHeadersPerProtocol() {
        assertThat(written(b -> RespWriter.arrayHeader(b, 3))).isEqualTo("*3\r\n");
        assertThat(written(b -> RespWriter.arrayHeader(b, 0))).isEqualTo("*0\r\n");
        assertThat(written(b -> RespWriter.mapHeader(b, 2, RESP3))).isEqualTo("%2\r\n");
        assertThat(written(b -> RespWriter.mapHeader(b, 2, RESP2))).isEqualTo("*4\r\n");
        assertThat(written(b -> RespWriter.setHeader(b, 5, RESP3))).isEqualTo("~5\r\n");
        assertThat(written(b -> RespWriter.setHeader(b, 5, RESP2))).isEqualTo("*5\r\n");
    }

    @Test
    void writesBooleansAsRespThreeBooleansOrRespTwoIntegers() {
        assertThat(written(b -> RespWriter.bool(b, true, RESP3))).isEqualTo("#t\r\n");
        assertThat(written(b -> RespWriter.bool(b, false, RESP3))).isEqualTo("#f\r\n");
        assertThat(written(b -> RespWriter.bool(b, true, RESP2))).isEqualTo(":1\r\n");
        assertThat(written(b -> RespWriter.bool(b, false, RESP2))).isEqualTo(":0\r\n");
    }

    /** Expected texts are glibc's printf("%.17g") output, as Redis 7.0's addReplyDouble writes them. */
    @ParameterizedTest
    @CsvSource({"1.5, 1.5", "3, 3", "-2.5, -2.5", "0.1, 0.10000000000000001", "100, 100", "1234.5678, 1234.5678",
            "0.3333333333333333, 0.33333333333333331", "1e16, 10000000000000000", "1e17, 1e+17",
            "99999999999999999, 1e+17", "123456789012345678, 1.2345678901234568e+17", "1e20, 1e+20",
            "1e308, 1e+308", "0.0001, 0.0001", "9.999999999999999e-5, 9.9999999999999991e-05",
            "1e-5, 1.0000000000000001e-05", "5e-324, 4.9406564584124654e-324", "0, 0", "-0.0, -0",
            "Infinity, inf", "-Infinity, -inf", "NaN, nan"})
    void writesDoublesAsRedisSeventeenSignificantDigits(double value, String text) {
        assertThat(written(b -> RespWriter.doubleValue(b, value, RESP3))).isEqualTo("," + text + "\r\n");
        assertThat(written(b -> RespWriter.doubleValue(b, value, RESP2)))
                .isEqualTo("$" + text.length() + "\r\n" + text + "\r\n");
    }

    @Test
    void writesVerbatimTextWithATxtPrefixInRespThreeAndAsABulkInRespTwo() {
        assertThat(written(b -> RespWriter.verbatim(b, "hello", RESP3))).isEqualTo("=9\r\ntxt:hello\r\n");
        assertThat(written(b -> RespWriter.verbatim(b, "", RESP3))).isEqualTo("=4\r\ntxt:\r\n");
        assertThat(written(b -> RespWriter.verbatim(b, "hello", RESP2))).isEqualTo("$5\r\nhello\r\n");
        assertThat(written(b -> RespWriter.verbatim(b, "é", RESP3))).isEqualTo("=6\r\ntxt:\u00c3\u00a9\r\n");
    }

    @Test
    void rejectsProtocolVersionsOtherThanTwoAndThree() {
        assertThatThrownBy(() -> written(b -> RespWriter.nullBulk(b, 1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("protocol version 1 is neither 2 nor 3");
    }

    @Test
    void writesEveryDecimalLengthCorrectly() {
        for (long v = 1, sign = 1; v > 0 && v < Long.MAX_VALUE / 10; v = v * 10 + 7, sign = -sign) {
            long value = sign * v;
            long neighbour = value - sign;
            assertThat(written(b -> RespWriter.writeDecimal(b, value))).isEqualTo(Long.toString(value));
            assertThat(written(b -> RespWriter.writeDecimal(b, neighbour))).isEqualTo(Long.toString(neighbour));
        }
    }
}
