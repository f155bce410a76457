package io.kvtier.resp;

import static io.kvtier.resp.Decoding.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Random;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The decoder's output does not depend on how the input was cut into reads: whole, byte by byte, at random, or with
 * every CR and its LF apart (after Netty's RedisDecoderTest.splitEOLDoesNotInfiniteLoop), nor on sink refusals.
 */
class RespDecoderFragmentationTest {
    private static final RespDecoder.Limits SMALL = new RespDecoder.Limits(200, 20, 64, 16);

    private static final String PIPELINE = "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$40\r\n" + "v".repeat(38) + "\r\n\r\n"
            + "\r\n*0\r\nGET \"k e\\x79\" 'a\\'b'\r\n*-1\r\n*2\r\n$4\r\nECHO\r\n$0\r\n\r\nPING\n"
            + "*2\r\n$6\r\nAPPEND\r\n$17\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\r\n  \n";

    private static final List<List<String>> PIPELINE_COMMANDS = List.of(
            List.of("SET", "key", "v".repeat(38) + "\r\n"), List.of("GET", "k ey", "a'b"), List.of("ECHO", ""),
            List.of("PING"), List.of("APPEND", "\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r"));

    private static Decoding.Outcome decode(List<byte[]> chunks, int refusalsPerSink, boolean authenticated) {
        RecordingSinkFactory sinks = new RecordingSinkFactory(refusalsPerSink);
        RespDecoder decoder = new RespDecoder(SMALL, sinks);
        decoder.setAuthenticated(authenticated);
        Decoding.Outcome outcome = Decoding.run(decoder, chunks);
        assertThat(sinks.allAborted()).as("every sink released or aborted").isTrue();
        return outcome;
    }

    /** Decodes {@code input} whole, then cut up every way, and checks all agree; returns the outcome. */
    private static Decoding.Outcome decodeEveryWay(byte[] input, long seed, boolean authenticated) {
        Random random = new Random(seed);
        Decoding.Outcome whole = decode(List.of(input), 0, authenticated);
        List<Function<byte[], List<byte[]>>> splitters = List.of(Decoding::byteByByte,
                Decoding::splitAfterEveryCarriageReturn,
                in -> Decoding.randomSplits(in, random, 1 + random.nextInt(40)));
        for (Function<byte[], List<byte[]>> splitter : splitters) {
            assertThat(decode(splitter.apply(input), random.nextInt(3), authenticated)).isEqualTo(whole);
        }
        return whole;
    }

    @Test
    void decodesTheSameCommandsWhetherFedWholeByteByByteOrInRandomSplits() {
        for (long seed = 0; seed < 50; seed++) {
            Decoding.Outcome outcome = decodeEveryWay(bytes(PIPELINE), seed, true);

            assertThat(outcome).isEqualTo(new Decoding.Outcome(PIPELINE_COMMANDS, null));
        }
    }

    @Test
    void decodesTheSameCommandsWhenEveryCarriageReturnAndItsLineFeedArriveApart() {
        List<byte[]> chunks = Decoding.splitAfterEveryCarriageReturn(bytes(PIPELINE));

        assertThat(chunks).hasSizeGreaterThan(20);
        assertThat(decode(chunks, 1, true).commands()).isEqualTo(PIPELINE_COMMANDS);
    }

    static List<String> erroneousInputs() {
        return List.of("*x\r\n", "*21\r\n", "*1\r\n$201\r\n", "*1\r\n:\r\n", "GET \"a\r\n", "*1\r\n$3\r\nabc\r\n*",
                "*1\r\n$" + "1".repeat(64), "*" + "1".repeat(64), "x".repeat(65),
                "PING\r\n*1\r\n$20\r\n0123456789abcdef\rX");
    }

    @ParameterizedTest
    @MethodSource("erroneousInputs")
    void reportsTheSameErrorAndCommandsHoweverTheInputIsSplit(String input) {
        decodeEveryWay(bytes(input), input.hashCode(), true);
    }

    @Test
    void reportsTheSameUnauthenticatedErrorsHoweverTheInputIsSplit() {
        assertThat(decodeEveryWay(bytes("*11\r\n"), 1, false).error()).contains("unauthenticated multibulk");
    }

    @Test
    @Timeout(60)
    void decodesRandomPipelinesToTheGeneratedCommandsHoweverSplit() {
        for (long seed = 0; seed < 300; seed++) {
            RespStreams.Stream stream = RespStreams.random(new Random(seed), 12, SMALL.maxInlineLength());

            Decoding.Outcome outcome = decodeEveryWay(bytes(stream.bytes()), seed, true);

            assertThat(outcome).as("seed %d", seed).isEqualTo(new Decoding.Outcome(stream.commands(), null));
        }
    }

    @Test
    @Timeout(60)
    void decodesCorruptedRandomPipelinesTheSameHoweverSplit() {
        for (long seed = 0; seed < 2000; seed++) {
            Random random = new Random(seed);
            String corrupted = RespStreams.corrupt(random, RespStreams.random(random, 8, 40).bytes());

            decodeEveryWay(bytes(corrupted), seed, random.nextBoolean());
        }
    }
}
