package io.kvtier.resp;

import static io.kvtier.resp.Decoding.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Framing of well-formed input: multibulk and inline commands, pipelining, skipped empties, Redis's quirks. */
class RespDecoderTest {
    private final RecordingSinkFactory sinks = new RecordingSinkFactory();
    private final RespDecoder decoder = new RespDecoder(RespDecoder.Limits.defaults(512L << 20), sinks);
    private final ByteBuf buf = Unpooled.buffer();

    @AfterEach
    void releaseBuffer() {
        buf.release();
    }

    private List<List<String>> decodeAll(String input) {
        return Decoding.run(decoder, bytes(input)).commands();
    }

    private RespCommand decode(String input) {
        buf.writeBytes(bytes(input));
        return decoder.decode(buf);
    }

    @Test
    void decodesAMultibulkCommand() {
        RespCommand command = decode("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nvalue\r\n");

        assertThat(Decoding.strings(command)).containsExactly("SET", "k", "value");
        assertThat(command.isSink(2)).isFalse();
        assertThat(buf.isReadable()).isFalse();
    }

    @Test
    void returnsNullUntilTheLastByteOfTheCommandArrives() {
        String input = "*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n";
        for (int i = 0; i < input.length() - 1; i++) {
            assertThat(decode(input.substring(i, i + 1))).isNull();
        }

        assertThat(Decoding.strings(decode("\n"))).containsExactly("ECHO", "hi");
    }

    @Test
    void decodesOneCommandPerCallAndLeavesTheNextInTheBuffer() {
        String first = "*1\r\n$4\r\nPING\r\n";
        String second = "PING\r\n";
        buf.writeBytes(bytes(first + second + "*1\r\n$4\r\nPI"));

        assertThat(Decoding.strings(decoder.decode(buf))).containsExactly("PING");
        assertThat(buf.readerIndex()).isEqualTo(first.length());
        assertThat(Decoding.strings(decoder.decode(buf))).containsExactly("PING");
        assertThat(buf.readerIndex()).isEqualTo(first.length() + second.length());
        assertThat(decoder.decode(buf)).isNull();
    }

    @Test
    void decodesPipelinedCommandsOfBothKinds() {
        assertThat(decodeAll("*1\r\n$4\r\nPING\r\nGET k\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\nQUIT\n"))
                .containsExactly(List.of("PING"), List.of("GET", "k"), List.of("GET", "k"), List.of("QUIT"));
    }

    @Test
    void skipsEmptyAndNegativeMultibulkCountsAndDecodesWhatFollows() {
        assertThat(decode("*0\r\n*-1\r\n*-9223372036854775808\r\n*1\r\n$1\r\nx\r\n").argCount()).isEqualTo(1);
        assertThat(decodeAll("*0\r\n")).isEmpty();
    }

    @Test
    void skipsBlankInlineLines() {
        assertThat(decodeAll("\r\n\n  \t \r\nPING\r\n\n")).containsExactly(List.of("PING"));
    }

    @Test
    void decodesAZeroLengthBulk() {
        assertThat(decodeAll("*2\r\n$4\r\nECHO\r\n$0\r\n\r\n")).containsExactly(List.of("ECHO", ""));
    }

    @Test
    void skipsTheTwoBytesAfterAPayloadWithoutCheckingThemLikeRedis() {
        assertThat(decodeAll("*2\r\n$1\r\na!?$1\r\nbXY")).containsExactly(List.of("a", "b"));
    }

    @Test
    void skipsTheByteAfterTheCarriageReturnOfCountAndLengthLinesLikeRedis() {
        assertThat(decodeAll("*1\rX$4\rYPING\r\n")).containsExactly(List.of("PING"));
    }

    @Test
    void growsItsArgumentArraysPastTheInitialCapacity() {
        StringBuilder input = new StringBuilder("*3000\r\n");
        for (int i = 0; i < 3000; i++) {
            input.append("$").append(String.valueOf(i).length()).append("\r\n").append(i).append("\r\n");
        }

        List<String> args = decodeAll(input.toString()).getFirst();

        assertThat(args).hasSize(3000);
        assertThat(args.get(2999)).isEqualTo("2999");
    }

    @Test
    void keepsPayloadBytesExactlyIncludingCrLfAndHighBytes() {
        assertThat(decodeAll("*1\r\n$6\r\n\r\n\u0000\u00ff*$\r\n")).containsExactly(List.of("\r\n\u0000\u00ff*$"));
    }

    @Test
    void acceptsInlineLinesEndedByABareNewline() {
        assertThat(decodeAll("SET k v\nGET k\r\n")).containsExactly(List.of("SET", "k", "v"), List.of("GET", "k"));
    }

    @Test
    void splitsInlineArgumentsLikeSdssplitargs() {
        assertThat(decodeAll("SET \"a b\\x41\\n\\t\\\"\\q\" 'it\\'s \\n' \"\" ''\r\n").getFirst())
                .containsExactly("SET", "a bA\n\t\"q", "it's \\n", "", "");
    }

    @Test
    void treatsAllCWhitespaceAsBlanksBetweenInlineArguments() {
        assertThat(decodeAll("\u000b\fa\u000bb\t c\r\n").getFirst()).containsExactly("a\u000bb", "c");
    }

    @Test
    void joinsQuotedAndUnquotedPartsOfOneInlineArgument() {
        assertThat(decodeAll("GET k\"e y\" x'1'\r\n").getFirst()).containsExactly("GET", "ke y", "x1");
    }

    @Test
    void keepsAnIncompleteHexEscapeLiterally() {
        assertThat(decodeAll("ECHO \"\\x4\" \"\\xZZ\"\r\n").getFirst()).containsExactly("ECHO", "x4", "xZZ");
    }

    @Test
    void neverEndsAnInlineLineWithANulBeforeItsNewlineLikeRedisStrchr() {
        assertThat(Decoding.run(decoder, bytes("ECHO a\u0000b\r\nPING\r\n")))
                .isEqualTo(new Decoding.Outcome(List.of(), null));
    }

    @Test
    void neverEndsALengthLineWithANulBeforeItsCarriageReturnLikeRedisStrchr() {
        assertThat(Decoding.run(decoder, bytes("*1\r\n$1\u0000\r\nx\r\n")))
                .isEqualTo(new Decoding.Outcome(List.of(), null));
    }

    @Test
    void acceptsNulBytesInPayloadsAndAfterALineEnd() {
        assertThat(decodeAll("*1\r\n$1\r\u0000\u0000\r\nPING\r\u0000")).containsExactly(List.of("\u0000"));
    }

    @Test
    void treatsAnInlineLineStartingWithSpaceAndStarAsInline() {
        assertThat(decodeAll(" *1\r\n")).containsExactly(List.of("*1"));
    }
}
